package io.sandboxes.examples;

import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;
import java.time.Duration;

/**
 * A terminal: a real PTY running an interactive shell; type into it, resize it, interrupt a
 * running command with Ctrl-C.
 */
public final class Terminal {
  private Terminal() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    sandboxes.sandbox().run(sandbox -> {
      StringBuffer screen = new StringBuffer();
      try (SpawnHandle shell = sandbox.spawn("bash", SpawnOptions.terminal(80, 24))) {
        shell.onStdout(screen::append);               // everything the terminal shows

        shell.write("stty size\n");                   // what the shell thinks its size is
        waitFor(screen, "24 80");
        out.println("terminal size: 24 rows x 80 columns");

        shell.terminal().orElseThrow().resize(120, 40);
        shell.write("stty size\n");
        waitFor(screen, "40 120");
        out.println("after resize: 40 rows x 120 columns");

        shell.write("echo job-$((1+1)); sleep 300; echo finished\n");  // a long foreground job...
        waitFor(screen, "job-2");                     // (the arithmetic shows it started, not the echoed typing)
        shell.write("\u0003");                        // ...interrupted by Ctrl-C
        shell.write("echo interrupted-$((40+2))\n");
        waitFor(screen, "interrupted-42");
        out.println("Ctrl-C stopped the job; the shell answered: interrupted-42");
      }
    });
  }

  /** Polls what the terminal showed until the text appears (a terminal has no "done" signal). */
  private static void waitFor(StringBuffer screen, String text) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!screen.toString().contains(text)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the terminal never showed '" + text + "'; it showed:\n" + screen);
      }
      sleepBriefly();
    }
  }

  private static void sleepBriefly() {
    try {
      Thread.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
