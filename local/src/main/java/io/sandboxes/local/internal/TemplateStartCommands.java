package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.build.TemplateService.Defaults;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A built template's start and ready commands, run in a new sandbox of it: the sandbox side of
 * what a build recorded in its {@link Defaults}.
 */
final class TemplateStartCommands {
  private TemplateStartCommands() {}

  /** How long a sandbox of a template with a {@code readyCmd} may take to become ready. */
  static final Duration READY_LIMIT = Duration.ofSeconds(60);

  /**
   * Runs a built template's {@code startCmd} in the background of a new sandbox, as the template's
   * user in its workdir, then its {@code readyCmd} until that exits 0.
   *
   * @throws RpcError when the start command cannot start, or the sandbox is not ready within {@link #READY_LIMIT}
   */
  static void run(LocalSandbox s, Defaults d) throws RpcError {
    if (d.startCmd() != null && !d.startCmd().isBlank()) {
      SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
      SandboxProcess p = s.start(new LocalSandbox.StartSpec(d.user(), "/bin/bash", List.of("-l", "-c", d.startCmd()), s.envVars(),
          d.workdir(), "start-cmd", false, 0, 0, false, Duration.ZERO), sub);
      p.unsubscribe(sub[0]); // nobody reads it: its output is dropped, as a background process's is
      s.log("info", "start command started: " + d.startCmd());
    }
    if (d.readyCmd() == null || d.readyCmd().isBlank()) {
      return;
    }
    Instant until = Instant.now().plus(READY_LIMIT);
    int last = -1;
    try {
      while (Instant.now().isBefore(until)) {
        SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
        SandboxProcess p = s.start(new LocalSandbox.StartSpec(d.user(), "/bin/bash", List.of("-l", "-c", d.readyCmd()), s.envVars(),
            d.workdir(), null, false, 0, 0, false, Duration.ZERO), sub);
        p.unsubscribe(sub[0]);
        if (p.awaitEnd(Duration.between(Instant.now(), until).plusMillis(1)) && p.end() != null) {
          last = p.end().exitCode();
          if (last == 0) {
            s.log("info", "ready command succeeded: " + d.readyCmd());
            return;
          }
        }
        Thread.sleep(200); // the ready command's own pace, as E2B polls it
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new RpcError("unavailable", "the template's ready command '" + d.readyCmd() + "' did not succeed within "
        + READY_LIMIT.toSeconds() + " s (last exit code " + (last < 0 ? "unknown" : Integer.toString(last)) + ")");
  }
}
