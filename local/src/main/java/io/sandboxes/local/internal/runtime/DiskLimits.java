package io.sandboxes.local.internal.runtime;

import java.io.IOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * How the runtime holds a sandbox's disk limit (the most its writable layer, not its volumes, may
 * hold) and measures the layer where it cannot enforce the limit itself. What is done with a
 * sandbox past its limit is the server's.
 */
public interface DiskLimits {
  /** How often each running sandbox's writable layer is measured (less often when a round takes longer). */
  Duration PERIOD = Duration.ofSeconds(3);

  /** How the limit is held. */
  enum Mechanism {
    /** The runtime enforces the size ({@code --storage-opt size=} on Docker). */
    QUOTA("enforced by the storage driver (--storage-opt size)"),
    /** Measured: allocated blocks and entries of the layer's folder on this host. */
    MEASURED_BLOCKS("measured every " + PERIOD.toSeconds() + " s (allocated blocks of the writable layer); a sandbox past it is stopped"),
    /** Measured: the apparent size of the layer's files as the runtime reports it (Docker's {@code SizeRw}). */
    MEASURED_SIZE_RW("measured every " + PERIOD.toSeconds() + " s (Docker's SizeRw of the writable layer); a sandbox past it is stopped");

    private final String description;

    Mechanism(String description) {
      this.description = description;
    }

    /** @return how it works, for the log */
    public String description() {
      return description;
    }
  }

  /**
   * What a measurement found.
   *
   * @param bytes what the layer holds
   * @param entries its files and folders, or -1 when the mechanism does not count them
   */
  record Usage(long bytes, long entries) {}

  /**
   * Finds how the limit can be held here, by probing (with instances that are never started).
   *
   * @param image an image to make the probes from
   * @param serverId the server the probes are labelled as made by
   */
  Mechanism detect(String image, String serverId);

  /**
   * Measures an instance's writable layer the way {@code mechanism} (not {@link Mechanism#QUOTA}) does.
   *
   * @return what it holds, or null when the instance is gone
   * @throws IOException when it could not be measured
   */
  @Nullable Usage measure(Mechanism mechanism, String instanceId) throws IOException;
}
