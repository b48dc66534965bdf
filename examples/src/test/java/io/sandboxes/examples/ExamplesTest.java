package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the examples as a user would, each in its own JVM, against the local runtime: asserts on
 * what they print, and that the JVM exits by itself once the example is done.
 */
class ExamplesTest {

  private record Run(int exitCode, String output) {}

  private static Run runExample(Class<?> main) throws Exception {
    Path log = Files.createTempFile("example-", ".log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), main.getName())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    boolean exited = p.waitFor(4, TimeUnit.MINUTES);
    String out = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    if (!exited) {
      p.destroyForcibly();
      throw new AssertionError(main.getSimpleName() + " did not exit within 4 minutes; it printed:\n" + out);
    }
    return new Run(p.exitValue(), out);
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  @DisplayName("Hello prints the Python program's output from inside a sandbox, then its JVM exits by itself")
  void hello() throws Exception {
    Run run = runExample(Hello.class);
    assertThat(run.exitCode()).as(run.output()).isZero();
    List<String> lines = run.output().lines().toList();
    assertThat(lines).as(run.output())
        .anyMatch(l -> l.matches("created sandbox [a-z0-9]{20}"))
        .anyMatch(l -> l.matches("Hello from Python 3\\.\\d+\\.\\d+ in a sandbox, as user"))
        .contains("6 x 7 = 42", "sandbox killed", "the page says: served from inside the sandbox")
        .anyMatch(l -> l.matches("exit code 0 after \\d+ ms"))
        .anyMatch(l -> l.matches("preview URL http://127\\.0\\.0\\.1:\\d+"));
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  @DisplayName("case 150: once main returns, the JVM exits within a second: no SDK thread, timer or stream keeps it alive")
  void exitsPromptly() throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), ExitCheck.class.getName())
        .redirectErrorStream(true).start();
    long returnedAt = 0;
    StringBuilder out = new StringBuilder();
    try (var reader = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        out.append(line).append('\n');
        if (line.equals("main returning")) {
          returnedAt = System.nanoTime();
        }
      }
    }
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).as(out.toString()).isTrue();
    long exitedAt = System.nanoTime();
    assertThat(out.toString()).contains("exec: ok");
    assertThat(returnedAt).as(out.toString()).isPositive();
    assertThat(java.time.Duration.ofNanos(exitedAt - returnedAt)).isLessThan(java.time.Duration.ofSeconds(1));
    assertThat(p.exitValue()).isZero();
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  @DisplayName("the tour, the README's main job, runs every example (hello, files and tar, terminal, volumes and snapshots, templates, code interpreter, egress report, LangChain4j, Spring AI and MCP tools) and exits cleanly")
  void tour() throws Exception {
    Run run = runExample(Tour.class);
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output().lines().toList()).as(run.output())
        .contains("== Hello", "6 x 7 = 42", "sandbox killed")
        .contains("== Files and tar", "build exit code 0", "dist/greeting.txt says: hello, build")
        .anyMatch(l -> l.matches("pushed \\d+ entries to /home/user/greeter"))
        .contains("== Terminal", "terminal size: 24 rows x 80 columns", "after resize: 40 rows x 120 columns",
            "Ctrl-C stopped the job; the shell answered: interrupted-42")
        .contains("== Volumes and snapshots", "volume says: written by the first sandbox", "snapshot says: tool from the snapshot",
            "removed the template and the volume")
        .contains("== Templates", "build log: [builder 2/4] [stdout]: facts written")
        .anyMatch(l -> l.matches("built template tour-report-[0-9a-f]{8}"))
        .anyMatch(l -> l.matches("sandbox says: template report: 3\\.\\d+\\.\\d+ in /opt/report, as user"))
        .anyMatch(l -> l.matches("deleted template tour-report-[0-9a-f]{8}"))
        .contains("== Code interpreter", "defined radius = 2", "area = 12.57", "streamed line 0", "streamed line 2",
            "error: NameError: name 'undefined_name' is not defined", "result: 12.566 (execution 6)")
        .anyMatch(l -> l.matches("saved the chart to .*sandboxes-chart\\.png \\(\\d{4,} bytes, image/png\\)"))
        .contains("== Egress report")
        .anyMatch(l -> l.startsWith("verdict: FILTERED (observed in "))
        .anyMatch(l -> l.startsWith("detail: deny-by-default verified: "))
        .contains("== LangChain4j tools", "tool run_python [code]: Runs a Python 3 program in your own Linux sandbox and returns its exit code, "
            + "stdout and stderr. Print what you want to see. Network: the sandbox has no network access (closed by default): it can"
            + " reach no host outside itself, so downloads and package installs from the internet fail. A failed connection is the"
            + " policy, not a flaky network: do not retry it.", "wrote 21 bytes to /home/user/plan.txt", "1229")
        .anyMatch(l -> l.startsWith("error: ") && l.contains("/home/user/plan.txt"))
        .anyMatch(l -> l.matches("\\[\\.\\.\\. \\d+ characters cut; 588895 in all \\.\\.\\.\\]"))
        .anyMatch(l -> l.matches("engine: 3\\.\\d+\\.\\d+"))
        .contains("== Spring AI tools", "tool callback run_command", "wrote 7 bytes to /home/user/todo.txt", "ship it",
            "conversations with a sandbox: 2", "context closed: every conversation's sandbox killed")
        .contains("== MCP tools", "mcp tool list_folder", "hello over MCP", "client closed: the server killed its sandbox and ended")
        .anyMatch(l -> l.startsWith("error result: true, error: "))
        .endsWith("== tour done");
    assertThat(run.output().lines().filter(l -> l.contains("Exception"))).as(run.output()).isEmpty();
  }

}
