package io.sandboxes.local.internal;

import com.github.dockerjava.api.model.Statistics;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.time.Instant;

/** One reading of a sandbox's resource use: CPU and memory from its cgroup (Docker's stats), disk from {@code df} inside it. */
public final class Metrics {
  private Metrics() {}

  /** A reading, in E2B's units: percent and bytes. */
  public record Sample(Instant at, double cpuUsedPct, long memUsed, long memTotal, long memCache, long diskUsed, long diskTotal,
      Instant diskAt) {}

  static Sample read(DockerRuntime docker, LocalSandbox s) throws RpcError {
    return read(docker, s, null);
  }

  /**
   * Reads a sample; with {@code disk}, its disk figures are kept instead of running {@code df} in
   * the sandbox again (disk use changes slowly, and an exec per sample is the costly part).
   */
  static Sample read(DockerRuntime docker, LocalSandbox s, @org.jspecify.annotations.Nullable Sample disk) throws RpcError {
    java.util.concurrent.atomic.AtomicReference<Statistics> got = new java.util.concurrent.atomic.AtomicReference<>();
    try (var callback = docker.client().statsCmd(s.containerId()).withNoStream(true)
        .exec(new com.github.dockerjava.api.async.ResultCallback.Adapter<Statistics>() {
          @Override
          public void onNext(Statistics object) {
            got.set(object);
          }
        })) {
      callback.awaitCompletion(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RpcError("canceled", "interrupted while reading metrics");
    } catch (IOException | RuntimeException e) {
      throw new RpcError("unavailable", "metrics of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
    Statistics stats = got.get();
    if (stats == null) {
      throw new RpcError("unavailable", "Docker gave no metrics for sandbox " + s.id());
    }
    double cpu = 0;
    if (stats.getCpuStats() != null && stats.getPreCpuStats() != null && stats.getCpuStats().getCpuUsage() != null
        && stats.getPreCpuStats().getCpuUsage() != null && stats.getCpuStats().getSystemCpuUsage() != null
        && stats.getPreCpuStats().getSystemCpuUsage() != null) {
      long cpuDelta = stats.getCpuStats().getCpuUsage().getTotalUsage() - stats.getPreCpuStats().getCpuUsage().getTotalUsage();
      long sysDelta = stats.getCpuStats().getSystemCpuUsage() - stats.getPreCpuStats().getSystemCpuUsage();
      Long online = stats.getCpuStats().getOnlineCpus();
      if (sysDelta > 0 && cpuDelta >= 0) {
        cpu = (double) cpuDelta / sysDelta * (online == null ? 1 : online) * 100.0 / s.cpuCount();
      }
    }
    long memUsed = 0;
    long memTotal = s.memoryMB() * 1024L * 1024L;
    long memCache = 0;
    if (stats.getMemoryStats() != null) {
      var detail = stats.getMemoryStats().getStats();
      memCache = detail == null || detail.getCache() == null ? 0 : detail.getCache();
      Long usage = stats.getMemoryStats().getUsage();
      memUsed = usage == null ? 0 : Math.max(0, usage - memCache);
      if (stats.getMemoryStats().getLimit() != null && stats.getMemoryStats().getLimit() > 0) {
        memTotal = Math.min(memTotal, stats.getMemoryStats().getLimit());
      }
    }
    if (disk != null) {
      return new Sample(Instant.now(), Math.round(cpu * 100) / 100.0, memUsed, memTotal, memCache, disk.diskUsed(), disk.diskTotal(),
          disk.diskAt());
    }
    long diskUsed = 0;
    long diskTotal = 0;
    try {
      DockerRuntime.Completed df = docker.runAsRoot(s.containerId(), "df", "-B1", "--output=used,size", "/");
      String[] lines = df.stdoutText().strip().split("\n");
      if (lines.length == 2) {
        String[] f = lines[1].strip().split("\\s+");
        diskUsed = Long.parseLong(f[0]);
        diskTotal = Long.parseLong(f[1]);
      }
    } catch (IOException | RuntimeException e) {
      throw new RpcError("unavailable", "disk use of sandbox " + s.id() + " could not be read: " + e.getMessage());
    }
    Instant at = Instant.now();
    return new Sample(at, Math.round(cpu * 100) / 100.0, memUsed, memTotal, memCache, diskUsed, diskTotal, at);
  }

}
