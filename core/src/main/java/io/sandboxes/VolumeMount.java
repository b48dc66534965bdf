package io.sandboxes;

import java.util.Objects;

/**
 * A named volume mounted into a sandbox at a path. Data written there outlives the sandbox.
 *
 * @param volume the volume's name
 * @param path the absolute mount path inside the sandbox, not {@code /}
 * @since 0.1
 */
public record VolumeMount(String volume, String path) {

  /** Validates the components. */
  public VolumeMount {
    Objects.requireNonNull(volume, "volume");
    Objects.requireNonNull(path, "path");
    if (!volume.matches("[a-zA-Z0-9_-]+")) {
      throw new IllegalArgumentException("volume name must be letters, digits, '_' or '-', got '" + volume + "'");
    }
    if (!path.startsWith("/") || path.equals("/") || path.contains("..")) {
      throw new IllegalArgumentException("path must be an absolute path other than /, got '" + path + "'");
    }
  }
}
