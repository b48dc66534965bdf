package io.sandboxes.template;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How to build a template: resources, tags, the cache, how long to wait, and where the log goes
 * while it runs. Immutable; each {@code with...} method returns a copy.
 *
 * @param cpuCount virtual CPUs of the build and of the template's sandboxes, from 1
 * @param memoryMB memory in MiB of the build and of the template's sandboxes, from 128
 * @param tags tags for this build (E2B's {@code name:tag}); empty for the server's default
 * @param skipCache true to rebuild every step, none from the server's cache
 * @param timeout how long the build may take, from its request to its end, positive
 * @param pollInterval how often the build's status is read, positive
 * @param onLog called with each log entry as it is read (in order, on the building thread), or
 *     {@code null}
 * @param minFreeDiskMb the free space, in MiB, the template's file system should have after its
 *     steps (E2B's {@code minFreeDiskMb}, sent in the build's request), or {@code null} for the
 *     server's default; 0 asks for no growth
 * @since 0.1
 */
public record BuildOptions(int cpuCount, int memoryMB, List<String> tags, boolean skipCache, Duration timeout,
    Duration pollInterval, @Nullable Consumer<BuildLogEntry> onLog, @Nullable Integer minFreeDiskMb) {

  /** The default build timeout: an hour, the local runtime's own limit. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofHours(1);
  /** How often the status is read by default, as E2B's SDK does: every 200 ms. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(200);

  /** Validates and copies the components. */
  public BuildOptions {
    if (cpuCount < 1) {
      throw new IllegalArgumentException("cpuCount must be at least 1, got " + cpuCount);
    }
    if (memoryMB < 128) {
      throw new IllegalArgumentException("memoryMB must be at least 128, got " + memoryMB);
    }
    tags = List.copyOf(Objects.requireNonNull(tags, "tags"));
    for (String t : tags) {
      if (t.isBlank()) {
        throw new IllegalArgumentException("a tag must not be blank");
      }
    }
    requirePositive(timeout, "timeout");
    requirePositive(pollInterval, "pollInterval");
    if (minFreeDiskMb != null && minFreeDiskMb < 0) {
      throw new IllegalArgumentException("minFreeDiskMb must not be negative, got " + minFreeDiskMb);
    }
  }

  /**
   * Options without a free-disk request, as before {@code minFreeDiskMb} existed.
   *
   * @param cpuCount virtual CPUs, from 1
   * @param memoryMB memory in MiB, from 128
   * @param tags tags for this build
   * @param skipCache true to rebuild every step
   * @param timeout how long the build may take
   * @param pollInterval how often the build's status is read
   * @param onLog called with each log entry, or {@code null}
   */
  public BuildOptions(int cpuCount, int memoryMB, List<String> tags, boolean skipCache, Duration timeout, Duration pollInterval,
      @Nullable Consumer<BuildLogEntry> onLog) {
    this(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, null);
  }

  private static void requirePositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
  }

  /**
   * The defaults, E2B's SDK's.
   *
   * @return 2 CPUs, 1024 MiB, no tags, the cache used, a one-hour timeout, the status read every
   *     200 ms, no log callback
   */
  public static BuildOptions defaults() {
    return new BuildOptions(2, 1024, List.of(), false, DEFAULT_TIMEOUT, DEFAULT_POLL_INTERVAL, null, null);
  }

  /**
   * Sets the virtual CPUs.
   *
   * @param cpuCount from 1
   * @return a copy with it
   */
  public BuildOptions withCpuCount(int cpuCount) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Sets the memory.
   *
   * @param memoryMB MiB, from 128
   * @return a copy with it
   */
  public BuildOptions withMemoryMB(int memoryMB) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Sets the build's tags.
   *
   * @param tags the tags
   * @return a copy with them
   */
  public BuildOptions withTags(List<String> tags) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Rebuilds every step, none from the server's cache (E2B's {@code skipCache}).
   *
   * @return a copy that skips the cache
   */
  public BuildOptions withSkipCache() {
    return new BuildOptions(cpuCount, memoryMB, tags, true, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Sets how long the build may take.
   *
   * @param timeout positive
   * @return a copy with it
   */
  public BuildOptions withTimeout(Duration timeout) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Sets how often the build's status is read.
   *
   * @param pollInterval positive
   * @return a copy with it
   */
  public BuildOptions withPollInterval(Duration pollInterval) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }

  /**
   * Follows the build's log as it is read.
   *
   * @param onLog called with each entry, in order
   * @return a copy with it
   */
  public BuildOptions onLog(Consumer<BuildLogEntry> onLog) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, Objects.requireNonNull(onLog, "onLog"),
        minFreeDiskMb);
  }

  /**
   * Asks for at least this much free space on the template's file system after its steps, as
   * E2B's {@code minFreeDiskMb}: sent in the build's request. E2B grows the file system on a best
   * effort and never shrinks it; the local server serves it up to the disk each sandbox has and
   * refuses the build with a 400 past it.
   *
   * @param minFreeDiskMb MiB, from 0 (0 asks for no growth)
   * @return a copy with it
   */
  public BuildOptions withMinFreeDiskMb(int minFreeDiskMb) {
    return new BuildOptions(cpuCount, memoryMB, tags, skipCache, timeout, pollInterval, onLog, minFreeDiskMb);
  }
}
