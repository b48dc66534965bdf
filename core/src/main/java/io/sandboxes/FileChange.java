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
  public enum Kind {
    /** It was created, or moved to this path. */
    CREATE,
    /** Its content was written. */
    WRITE,
    /** It was deleted. */
    REMOVE,
    /** It was renamed or moved away from this path; the new path, when watched, sees {@link #CREATE}. */
    RENAME,
    /** Its permissions or other attributes changed. */
    CHMOD
  }

  /** Validates the components. */
  public FileChange {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(kind, "kind");
  }
}
