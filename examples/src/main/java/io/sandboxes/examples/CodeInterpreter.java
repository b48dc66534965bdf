package io.sandboxes.examples;

import io.sandboxes.CodeContext;
import io.sandboxes.CodeExecution;
import io.sandboxes.CodeResult;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A code-interpreter tool of the kind an agent calls: snippets run one after another in one
 * context of the sandbox's code interpreter (a Jupyter kernel), so state (variables, imports)
 * carries from one to the next; output is streamed back as it is printed, an exception comes
 * back as data for the agent to read, and a chart comes back as PNG bytes, saved to a file.
 */
public final class CodeInterpreter {

  private CodeInterpreter() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    sandboxes.sandbox().codeInterpreter().run(sandbox -> {
      CodeContext session = sandbox.createCodeContext();   // one agent session: its own kernel
      RunCodeOptions tool = RunCodeOptions.defaults().inContext(session)
          .onStdout(text -> out.print(text))                // shown as soon as it is printed
          .onStderr(text -> out.print("stderr: " + text));
      for (String snippet : List.of(
          "import math\nradius = 2\nprint('defined radius =', radius)",
          "area = math.pi * radius ** 2\nprint(f'area = {area:.2f}')",
          "for i in range(3):\n    print('streamed line', i)",
          "print(undefined_name)",
          """
          import matplotlib.pyplot as plt
          xs = [r / 2 for r in range(1, 9)]
          plt.plot(xs, [math.pi * x ** 2 for x in xs])
          plt.title('area by radius')
          plt.show()
          """,
          "round(area, 3)")) {
        out.println(">>> " + snippet.lines().findFirst().orElse(""));
        CodeExecution run = sandbox.runCode(snippet, tool);
        if (run.error() != null) {
          // an exception is data the agent reads, not a failure of the tool
          out.println("error: " + run.error().name() + ": " + run.error().value());
        }
        for (CodeResult result : run.results()) {
          for (CodeResult.Image image : result.images()) {
            Path file = Path.of(System.getProperty("java.io.tmpdir"), "sandboxes-chart.png");
            try {
              Files.write(file, image.bytes());
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
            out.println("saved the chart to " + file + " (" + image.bytes().length + " bytes, " + image.mimeType() + ")");
          }
        }
        if (run.text() != null) {
          out.println("result: " + run.text() + " (execution " + run.executionCount() + ")");
        }
      }
    });
  }
}
