package io.sandboxes;

import java.util.Objects;

/**
 * A change seen under a watched folder.
 *
 * @param path the path of what changed, relative to the watched folder
 * @param kind what happened to it
 * @since 0.1
 */
public record FileChange(String path, Kind kind) {

  /** What happened. */
  public enum Kind { CREATE, WRITE, REMOVE, RENAME, CHMOD }

  /** Validates the components. */
  public FileChange {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(kind, "kind");
  }
}
