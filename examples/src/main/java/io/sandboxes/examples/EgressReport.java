package io.sandboxes.examples;

import io.sandboxes.EgressVerdict;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;

/**
 * An egress report: ask the provider to prove, by observation, that sandboxes cannot reach the
 * network freely. A throwaway sandbox with a deny-by-default allow-list probes an allowed host,
 * a denied host and a raw IP (on the local runtime: its own witnesses), then is destroyed.
 */
public final class EgressReport {
  private EgressReport() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    long started = System.nanoTime();
    EgressVerdict verdict = sandboxes.verifyEgress();
    out.println("verdict: " + verdict.state() + " (observed in " + (System.nanoTime() - started) / 1_000_000 + " ms)");
    out.println("detail: " + verdict.detail());
    if (verdict.remediation() != null) {
      out.println("remediation: " + verdict.remediation());
    }
  }
}
