package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.runtime.DiskLimits;
import io.sandboxes.local.internal.runtime.DiskLimits.Mechanism;
import io.sandboxes.local.internal.runtime.DiskLimits.Usage;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's disk limit: the most its writable layer (the container's own filesystem, not its
 * volumes) may hold. Where the storage driver can enforce a size ({@code --storage-opt size=}:
 * overlay2 on xfs with {@code pquota}, btrfs, zfs, ...) it does, and a full disk is the sandbox's
 * own ENOSPC. Where it cannot (overlay2 on ext4, as on most hosts), each running sandbox's
 * writable layer is measured every few seconds and a sandbox past its limit is stopped (removed)
 * with that reason.
 *
 * <p>How the layer is measured is the runtime's ({@link DiskLimits}; on Docker the allocated
 * blocks of the layer's folder and its count of files and folders, or else Docker's
 * {@code SizeRw}); a count of files and folders is held to one per 16 KiB of the limit (ext4's
 * own ratio), so millions of empty files cannot fill the host's inode table.
 */
public final class DiskGuard implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskGuard.class);
  /** How often each running sandbox's writable layer is measured (less often when a round takes longer). */
  static final Duration PERIOD = DiskLimits.PERIOD;
  /** Files and folders allowed per MB of limit: one per 16 KiB, as ext4 makes them. */
  static final long INODES_PER_MB = 64;

  /** What is done with a sandbox past its limit. */
  interface Stopper {
    void stop(LocalSandbox sandbox, String reason);
  }

  private final DiskLimits limits;
  private final Mechanism mechanism;
  private final Supplier<List<LocalSandbox>> running;
  private final Stopper stopper;
  private final @Nullable Thread thread;

  private DiskGuard(DiskLimits limits, Mechanism mechanism, Supplier<List<LocalSandbox>> running, Stopper stopper) {
    this.limits = limits;
    this.mechanism = mechanism;
    this.running = running;
    this.stopper = stopper;
    this.thread = mechanism == Mechanism.QUOTA ? null : Thread.ofVirtual().name("sandboxes-disk-guard").start(this::loop);
  }

  /**
   * Finds how the limit can be held on this engine and starts measuring where it must be.
   *
   * @param limits the runtime's disk limits
   * @param image an image to make the (never started) probe containers from
   * @param running the sandboxes to measure, each round
   * @param stopper what is done with one past its limit
   */
  static DiskGuard start(DiskLimits limits, String image, String serverId, Supplier<List<LocalSandbox>> running,
      Stopper stopper) {
    Mechanism m = limits.detect(image, serverId);
    StructuredLog.atInfo(LOG).addKeyValue("event", "disk.limit").addKeyValue("mechanism", m.name())
        .log("sandbox disk limits are " + m.description());
    return new DiskGuard(limits, m, running, stopper);
  }

  /** @return how the limit is held */
  public Mechanism mechanism() {
    return mechanism;
  }

  /** @return why a sandbox with this usage must stop, or null when it is within its limit */
  static @Nullable String overLimit(Usage u, long limitMB) {
    long limit = limitMB * 1024 * 1024;
    if (u.bytes() > limit) {
      return "stopped: its writable layer passed its disk limit of " + limitMB + " MB (measured " + (u.bytes() >> 20) + " MB)";
    }
    if (u.entries() > limitMB * INODES_PER_MB) {
      return "stopped: its writable layer passed its limit of " + limitMB * INODES_PER_MB + " files and folders (one per 16 KiB"
          + " of its disk limit of " + limitMB + " MB; measured " + u.entries() + ")";
    }
    return null;
  }

  private void loop() {
    Duration pause = PERIOD;
    while (!Thread.currentThread().isInterrupted()) {
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        return;
      }
      long began = System.nanoTime();
      round();
      // a round over many or crowded sandboxes takes long: the pause after it is at least as long,
      // so measuring keeps to half of one core at most
      Duration took = Duration.ofNanos(System.nanoTime() - began);
      pause = took.compareTo(PERIOD) > 0 ? took : PERIOD;
    }
  }

  /** Measures every running sandbox once, stopping each past its limit. */
  private void round() {
    for (LocalSandbox s : running.get()) {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      if (s.paused() || s.diskSizeMB() <= 0) {
        continue; // a frozen or stopped container writes nothing
      }
      try {
        Usage u = limits.measure(mechanism, s.instanceId());
        String reason = u == null ? null : overLimit(u, s.diskSizeMB());
        if (reason != null) {
          StructuredLog.atWarn(LOG).addKeyValue("event", "sandbox.disk-limit").addKeyValue("sandbox", s.id())
              .addKeyValue("bytes", u.bytes()).addKeyValue("entries", u.entries()).addKeyValue("limitMB", s.diskSizeMB())
              .log("sandbox {} {}", s.id(), reason);
          stopper.stop(s, reason);
        }
      } catch (java.io.InterruptedIOException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        if (s.killed()) {
          // killed while it was measured: its layer goes with its container, no limit is left to hold
          LOG.debug("the writable layer of sandbox {}, killed meanwhile, was not measured: {}", s.id(), e.toString());
        } else {
          // not measured is not within the limit: said every round until it can be measured again
          LOG.warn("the writable layer of sandbox {} could not be measured: {}", s.id(), e.toString());
        }
      }
    }
  }

  @Override
  public void close() {
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(Duration.ofSeconds(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
