package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One reading of a sandbox's resource use: CPU and memory from outside the sandbox (its cgroup
 * files on the host, on Docker), disk from its daemon ({@code statvfs} of {@code /}, as {@code df}
 * inside it would count it).
 *
 * <p>The disk figure never comes from a process the container engine starts in the sandbox: on
 * Docker 20.10 such an exec, caught by a freeze of the container (a pause, a commit) between its
 * creation and its start, never starts, and holds the container's exec store meanwhile, so every
 * inspect and removal of that container waits with it. The daemon's answer has a deadline instead.
 */
public final class Metrics {
  private Metrics() {}

  /** How long a disk reading waits for the sandbox's daemon (it answers in well under a millisecond). */
  static final Duration DISK_ANSWER = Duration.ofSeconds(2);

  /** A reading, in E2B's units: percent and bytes. */
  public record Sample(Instant at, double cpuUsedPct, long memUsed, long memTotal, long memCache, long diskUsed, long diskTotal) {}

  /**
   * Reads a sandbox's CPU and memory use from outside it ({@link SandboxEngine#usage}).
   *
   * @throws RpcError unavailable when they could not be read: the sample is then absent, never zero
   */
  static SandboxEngine.Usage usage(SandboxEngine engine, LocalSandbox s) throws RpcError {
    int cores = Math.max(1, Math.min(s.cpuCount(), Runtime.getRuntime().availableProcessors()));
    try {
      return engine.usage(s.instanceId(), cores);
    } catch (IOException e) {
      throw new RpcError("unavailable", "CPU and memory use of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
  }

  /**
   * Reads a sandbox's disk use through its daemon's connection, waiting at most {@link #DISK_ANSWER}.
   *
   * @param daemon the connection as it was when the sandbox was found running, or null when none was
   * @throws RpcError unavailable when it could not be read (no daemon, a daemon too old to say, no
   *     answer in time): never a disk found empty
   */
  static DaemonConnection.FileSystemInfo disk(LocalSandbox s, @Nullable DaemonConnection daemon) throws RpcError {
    if (daemon == null) {
      throw new RpcError("unavailable", "disk use of sandbox " + s.id() + " could not be read: its daemon is not connected");
    }
    try {
      return daemon.fileSystem("/", null, DISK_ANSWER);
    } catch (IOException e) {
      throw new RpcError("unavailable", "disk use of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
  }

  /** A sample of the readings, in E2B's units; the memory total is the smaller of the sandbox's and the runtime's limit. */
  static Sample sample(LocalSandbox s, SandboxEngine.Usage usage, DaemonConnection.FileSystemInfo disk) {
    long memTotal = s.memoryMB() * 1024L * 1024L;
    if (usage.memLimit() > 0) {
      memTotal = Math.min(memTotal, usage.memLimit());
    }
    return new Sample(Instant.now(), Math.round(usage.cpuUsedPct() * 100) / 100.0, usage.memUsed(), memTotal, usage.memCache(),
        disk.used(), disk.size());
  }
}
