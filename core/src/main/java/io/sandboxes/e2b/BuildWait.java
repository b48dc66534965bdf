package io.sandboxes.e2b;

import io.sandboxes.SandboxException;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.BuildOptions;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.TemplateBuildException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The wait of {@link E2BTemplates#waitForBuild}: the build's status read until it has ended and
 * its log has been read to the end (a finished build's log may take several pages), within a
 * deadline, each read {@link BuildOptions#DEFAULT_POLL_INTERVAL} after the last while it runs.
 */
final class BuildWait {
  private BuildWait() {}

  static BuildStatus await(E2BTemplates templates, BuildInfo build, Duration timeout, @Nullable Consumer<BuildLogEntry> onLog) {
    if (timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be positive, got " + timeout);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    List<BuildLogEntry> log = new ArrayList<>();
    while (true) {
      BuildStatus s = templates.buildStatus(build, log.size());
      for (BuildLogEntry e : s.logEntries()) {
        log.add(e);
        if (onLog != null) {
          onLog.accept(e);
        }
      }
      if (s.finished() && s.logEntries().isEmpty()) {
        if (s.state() == BuildStatus.State.READY) {
          return new BuildStatus(s.templateId(), s.buildId(), s.state(), log, null);
        }
        BuildStatus.Reason r = s.reason();
        throw new TemplateBuildException(build.name(), build.templateId(), build.buildId(),
            r == null ? "the server gave no reason" : r.message(), r == null ? null : r.step(), log);
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TemplateBuildException(build.name(), build.templateId(), build.buildId(), "the build did not finish within "
            + timeout + " (it was still " + s.state().wire() + "); it goes on", null, log);
      }
      if (!s.finished()) {
        try {
          TimeUnit.NANOSECONDS.sleep(Math.min(left, BuildOptions.DEFAULT_POLL_INTERVAL.toNanos()));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SandboxException("build " + build.buildId() + " of template " + build.name()
              + ": interrupted while waiting for it", e);
        }
      }
    }
  }
}
