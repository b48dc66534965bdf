package io.sandboxes.examples;

import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A code-interpreter tool of the kind an agent calls: one long-lived Python process per session,
 * so state (variables, imports) carries from one snippet to the next, with output streamed back
 * as it is printed.
 */
public final class CodeInterpreter {
  /** Printed after each snippet, so the tool knows the snippet is done. */
  private static final String DONE = "__snippet_done__";

  private CodeInterpreter() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    sandboxes.sandbox().run(sandbox -> {
      // A small driver: reads snippets separated by a marker line and execs them in one namespace.
      sandbox.writeFile("/home/user/driver.py", """
          import sys
          namespace = {}
          buffer = []
          for line in sys.stdin:
              if line.rstrip("\\n") == "__run__":
                  try:
                      exec("".join(buffer), namespace)
                  except Exception as e:
                      print(f"error: {e!r}")
                  buffer = []
                  print("%s", flush=True)
              else:
                  buffer.append(line)
          """.formatted(DONE));
      LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
      StringBuilder partial = new StringBuilder();
      try (SpawnHandle python = sandbox.spawn("python3 -u /home/user/driver.py", SpawnOptions.pipes())) {
        python.onStdout(chunk -> {
          synchronized (partial) {
            partial.append(chunk);
            int nl;
            while ((nl = partial.indexOf("\n")) >= 0) {
              lines.add(partial.substring(0, nl));
              partial.delete(0, nl + 1);
            }
          }
        });
        for (String snippet : List.of(
            "import math\nradius = 2\nprint('defined radius =', radius)",
            "area = math.pi * radius ** 2\nprint(f'area = {area:.2f}')",
            "for i in range(3):\n    print('streamed line', i)",
            "print(undefined_name)")) {
          out.println(">>> " + snippet.lines().findFirst().orElse(""));
          python.write(snippet + "\n__run__\n");
          String line;
          while (!(line = next(lines)).equals(DONE)) {
            out.println(line);                                   // shown as soon as it arrives
          }
        }
        python.closeStdin();
      }
    });
  }

  private static String next(LinkedBlockingQueue<String> lines) {
    try {
      String line = lines.poll(30, TimeUnit.SECONDS);
      if (line == null) {
        throw new IllegalStateException("the interpreter went quiet");
      }
      return line;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
