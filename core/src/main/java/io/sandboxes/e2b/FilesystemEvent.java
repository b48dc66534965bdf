package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
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

  /** One watch message as an event, or null for a message that is none (a keepalive, an unknown type). */
  static @Nullable FilesystemEvent of(JsonNode message) {
    JsonNode fs = message.get("filesystem");
    if (fs == null) {
      return null;
    }
    FileChange.Kind kind = switch (fs.path("type").asText()) {
      case "EVENT_TYPE_CREATE" -> FileChange.Kind.CREATE;
      case "EVENT_TYPE_WRITE" -> FileChange.Kind.WRITE;
      case "EVENT_TYPE_REMOVE" -> FileChange.Kind.REMOVE;
      case "EVENT_TYPE_RENAME" -> FileChange.Kind.RENAME;
      case "EVENT_TYPE_CHMOD" -> FileChange.Kind.CHMOD;
      default -> null;
    };
    if (kind == null) {
      return null;
    }
    JsonNode entry = fs.get("entry");
    return new FilesystemEvent(fs.path("name").asText(), kind, entry == null || !entry.isObject() ? null : EntryInfo.of(entry));
  }

}
