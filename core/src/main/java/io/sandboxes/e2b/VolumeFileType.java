package io.sandboxes.e2b;

/**
 * The type of an entry in a volume, as E2B's volume content API names it.
 *
 * @since 0.1
 */
public enum VolumeFileType {
  /** A regular file. */
  FILE("file"),
  /** A directory. */
  DIRECTORY("directory"),
  /** A symbolic link; {@link VolumeEntry#target()} says where it points. */
  SYMLINK("symlink"),
  /** Anything else, or a type this client does not know. */
  UNKNOWN("unknown");

  private final String wire;

  VolumeFileType(String wire) {
    this.wire = wire;
  }

  /**
   * Returns the name on the wire.
   *
   * @return {@code file}, {@code directory}, {@code symlink} or {@code unknown}
   */
  public String wire() {
    return wire;
  }

  static VolumeFileType ofWire(String value) {
    for (VolumeFileType t : values()) {
      if (t.wire.equals(value)) {
        return t;
      }
    }
    return UNKNOWN;
  }
}
