package io.sandboxes.examples;

import io.sandboxes.SandboxException;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;

/**
 * What a new user's first program does, run by {@link FirstHourTest} in a JVM with an empty
 * environment. {@code hi}: runs {@code echo hi} in a sandbox and prints its output.
 * {@code fails}: expects {@code Sandboxes.local()} to fail and prints how long it took and why,
 * then what {@code Sandboxes.unavailableReason()} says and how long that took.
 */
public final class FirstHour {
  private FirstHour() {}

  public static void main(String[] args) {
    if (args.length == 1 && args[0].equals("hi")) {
      try (SandboxClient s = Sandboxes.local()) {
        System.out.print(s.sandbox().exec("echo hi").stdout());
      }
      return;
    }
    if (args.length == 1 && args[0].equals("fails")) {
      long t = System.nanoTime();
      try (SandboxClient s = Sandboxes.local()) {
        System.out.println("started, unexpectedly: " + s);
        System.exit(3);
      } catch (SandboxException e) {
        System.out.println("threw after " + (System.nanoTime() - t) / 1_000_000 + " ms: " + e.getMessage());
      }
      t = System.nanoTime();
      String reason = Sandboxes.unavailableReason().orElse("(none)");
      System.out.println("reason after " + (System.nanoTime() - t) / 1_000_000 + " ms: " + reason);
      return;
    }
    throw new IllegalArgumentException("usage: FirstHour hi|fails");
  }
}
