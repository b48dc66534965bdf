package io.sandboxes;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A named volume.
 *
 * @param name its name
 * @param id the provider's id for it
 * @param attached whether a running or paused sandbox mounts it
 * @param createdAt when it was created, or null when the provider does not say (E2B does not)
 * @param sizeBytes its size, or null when the provider does not say (E2B does not)
 * @since 0.1
 */
public record VolumeDescriptor(String name, String id, boolean attached, @Nullable Instant createdAt, @Nullable Long sizeBytes) {

  /** Validates the components. */
  public VolumeDescriptor {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(id, "id");
  }
}
