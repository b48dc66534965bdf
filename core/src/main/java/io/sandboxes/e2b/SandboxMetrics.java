package io.sandboxes.e2b;

import java.time.Instant;
import java.util.Objects;

/**
 * One sample of a sandbox's resource use, as E2B's {@code getMetrics} reports it.
 *
 * @param timestamp when the sample was taken
 * @param cpuUsedPct CPU in use over the moments before the sample, in percent of all the
 *     sandbox's cores ({@code 100} is every core busy)
 * @param cpuCount how many cores the sandbox has
 * @param memUsed memory in use, in bytes, page cache not included
 * @param memTotal memory the sandbox may use, in bytes
 * @param memCache page cache, in bytes
 * @param diskUsed bytes used on the sandbox's root filesystem
 * @param diskTotal size of the sandbox's root filesystem, in bytes
 * @since 0.1
 */
public record SandboxMetrics(Instant timestamp, double cpuUsedPct, int cpuCount, long memUsed, long memTotal, long memCache,
    long diskUsed, long diskTotal) {

  /** Checks the timestamp is there. */
  public SandboxMetrics {
    Objects.requireNonNull(timestamp, "timestamp");
  }
}
