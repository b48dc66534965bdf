package io.sandboxes.e2b;

import java.util.Objects;

/**
 * An E2B volume.
 *
 * @param volumeId the server's id for it
 * @param name its name, unique per account
 * @since 0.1
 */
public record VolumeInfo(String volumeId, String name) {

  /** Validates the components. */
  public VolumeInfo {
    Objects.requireNonNull(volumeId, "volumeId");
    Objects.requireNonNull(name, "name");
  }
}
