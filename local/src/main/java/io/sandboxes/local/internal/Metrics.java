package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Instant;

/**
 * One reading of a sandbox's resource use, from its runtime: CPU and memory from outside the sandbox
 * (its cgroup files on the host, on Docker), disk from {@code df} inside it.
 */
public final class Metrics {
  private Metrics() {}

  /** A reading, in E2B's units: percent and bytes. */
  public record Sample(Instant at, double cpuUsedPct, long memUsed, long memTotal, long memCache, long diskUsed, long diskTotal,
      Instant diskAt) {}

  static Sample read(SandboxEngine engine, LocalSandbox s) throws RpcError {
    return read(engine, s, null);
  }

  /**
   * Reads a sample: CPU and memory from outside the sandbox ({@link SandboxEngine#usage});
   * with {@code disk}, its disk figures are kept instead of running {@code df} in the sandbox
   * again (disk use changes slowly, and an exec per sample is the costly part). A figure that
   * cannot be read fails the sample: it is absent, never zero.
   */
  static Sample read(SandboxEngine engine, LocalSandbox s, @org.jspecify.annotations.Nullable Sample disk)
      throws RpcError {
    int cores = Math.max(1, Math.min(s.cpuCount(), Runtime.getRuntime().availableProcessors()));
    SandboxEngine.Usage usage;
    try {
      usage = engine.usage(s.instanceId(), cores);
    } catch (IOException e) {
      throw new RpcError("unavailable", "CPU and memory use of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
    double cpu = usage.cpuUsedPct();
    long memUsed = usage.memUsed();
    long memCache = usage.memCache();
    long memTotal = s.memoryMB() * 1024L * 1024L;
    if (usage.memLimit() > 0) {
      memTotal = Math.min(memTotal, usage.memLimit());
    }
    if (disk != null) {
      return new Sample(Instant.now(), Math.round(cpu * 100) / 100.0, memUsed, memTotal, memCache, disk.diskUsed(), disk.diskTotal(),
          disk.diskAt());
    }
    SandboxEngine.DiskUsage df;
    try {
      df = engine.diskUsage(s.instanceId());
    } catch (IOException | RuntimeException e) {
      throw new RpcError("unavailable", "disk use of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
    long diskUsed = df.used();
    long diskTotal = df.size();
    Instant at = Instant.now();
    return new Sample(at, Math.round(cpu * 100) / 100.0, memUsed, memTotal, memCache, diskUsed, diskTotal, at);
  }

}
