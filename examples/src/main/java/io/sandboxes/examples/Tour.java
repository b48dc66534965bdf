package io.sandboxes.examples;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The README's main job: every example in turn, against one local runtime.
 */
public final class Tour {
  private Tour() {}

  public static void main(String[] args) {
    PrintStream out = System.out;
    out.println("== starting the local runtime (Docker; the first run builds the base image)");
    try (SandboxClient sandboxes = Sandboxes.local()) {
      Map<String, BiConsumer<SandboxClient, PrintStream>> examples = new LinkedHashMap<>();
      examples.put("Hello", Hello::run);
      examples.put("Files and tar", FilesAndTar::run);
      examples.put("Terminal", Terminal::run);
      examples.put("Volumes and snapshots", VolumesAndSnapshots::run);
      examples.put("Templates", Templates::run);
      examples.put("Code interpreter", CodeInterpreter::run);
      examples.put("Egress report", EgressReport::run);
      examples.put("LangChain4j tools", LangChain4jTools::run);
      examples.put("Spring AI tools", (client, printer) -> SpringAiTools.run(printer));
      examples.put("MCP tools", (client, printer) -> McpTools.run(printer));
      examples.forEach((title, example) -> {
        out.println("== " + title);
        example.accept(sandboxes, out);
      });
    }
    out.println("== tour done");
  }
}
