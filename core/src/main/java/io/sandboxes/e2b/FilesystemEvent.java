package io.sandboxes.e2b;

import io.sandboxes.FileChange;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A change under a watched folder, as E2B's {@code FilesystemEvent}.
 *
 * @param name the changed path, relative to the watched folder
 * @param type what happened to it
 * @param entry what the daemon says of the path now, when the watch asked for entries
 *     ({@link WatchOptions#withIncludeEntry}) and the path was still there to be read
 * @since 0.1
 */
public record FilesystemEvent(String name, FileChange.Kind type, @Nullable EntryInfo entry) {

  /** Validates the components. */
  public FilesystemEvent {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }
}
