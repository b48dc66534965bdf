package io.sandboxes.examples;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.Template;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * Templates: build your own sandbox image through E2B's build API (base, a copied script, a RUN
 * step), then boot a sandbox from it by name and run the script there.
 */
public final class Templates {
  private Templates() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    String name = "tour-report-" + UUID.randomUUID().toString().substring(0, 8);
    try {
      // The build's context: a folder on this machine that copy() reads from.
      Path context = Files.createTempDirectory("template-context-");
      Files.writeString(context.resolve("report.py"), String.join("\n",
          "import getpass, json, os",
          "facts = json.load(open('/opt/report/facts.json'))",
          "print(f\"{os.environ['REPORT_TITLE']}: {facts['python']} in {os.getcwd()}, as {getpass.getuser()}\")",
          ""));

      Template template = Template.fromTemplate("base")
          .withContextDir(context)
          .copy("report.py", "/opt/report/report.py", CopyOptions.defaults().withMode(0755))
          .runCmd("python3 -c 'import json, platform; print(json.dumps({\"python\": platform.python_version()}))'"
              + " > /opt/report/facts.json && echo facts written", "root")
          .setEnv("REPORT_TITLE", "template report")
          .setWorkdir("/opt/report");

      BuildInfo built = sandboxes.buildTemplate(template, name, line -> {
        // a command's output line, as E2B prints it: "[builder 2/4] [stdout]: facts written"
        if (line.message().endsWith("[stdout]: facts written")) {
          out.println("build log: " + line.message());
        }
      });
      out.println("built template " + built.name());

      sandboxes.sandbox().template(built).run(sandbox ->
          out.print("sandbox says: " + sandbox.exec("python3 report.py").orThrow().stdout()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      sandboxes.deleteTemplate(name);
      out.println("deleted template " + name);
    }
  }
}
