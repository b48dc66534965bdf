package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a sandbox's daemon says about one path, as E2B's {@code EntryInfo}: the answer of
 * {@link Filesystem#getInfo(String)}, {@link Filesystem#list(String, int)} and
 * {@link Filesystem#rename(String, String)}, and the entry of a watch event.
 *
 * @param name the last element of the path
 * @param type what it is; for a link, what its target is
 * @param path its absolute path
 * @param size its size in bytes, or null when the daemon gave no number that fits a non-negative
 *     long (never a guess)
 * @param mode its permission bits, e.g. {@code 0644} (420)
 * @param permissions its permissions as {@code ls -l} shows them, e.g. {@code -rw-r--r--}
 * @param owner the owning user's name (or number, when it has no name)
 * @param group the owning group's name (or number)
 * @param modifiedTime when its content last changed, or null when the daemon did not say
 * @param symlinkTarget where a symbolic link points, fully resolved; null for anything else
 * @param metadata the file's user metadata (E2B's {@code user.e2b.*} extended attributes, the
 *     prefix removed); empty when it has none
 * @since 0.1
 */
public record EntryInfo(String name, FileType type, String path, @Nullable Long size, int mode, String permissions,
    String owner, String group, @Nullable Instant modifiedTime, @Nullable String symlinkTarget, Map<String, String> metadata) {

  /** Validates and copies the components. */
  public EntryInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(permissions, "permissions");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(group, "group");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
  }

  /**
   * Whether this path is a symbolic link.
   *
   * @return true when the daemon gave a link target
   */
  public boolean isSymlink() {
    return symlinkTarget != null;
  }

  /** Reads envd's {@code EntryInfo} message. */
  static EntryInfo of(JsonNode e) {
    String target = Json.text(e, "symlinkTarget");
    // protobuf's JSON leaves out a zero: an absent size is 0; one that is there but not a
    // non-negative long is unknown, never wrapped, rounded or negative
    Long size = e.has("size") ? Json.exactLong(e.get("size")) : Long.valueOf(0);
    if (size != null && size < 0) {
      size = null;
    }
    Integer mode = Json.exactInt(e.get("mode"));
    return new EntryInfo(e.path("name").asText(), type(e.path("type").asText()), e.path("path").asText(), size,
        mode == null ? 0 : mode, e.path("permissions").asText(""), e.path("owner").asText(""), e.path("group").asText(""),
        time(Json.text(e, "modifiedTime")), target == null || target.isEmpty() ? null : target, Json.stringMap(e.get("metadata")));
  }

  static FileType type(String wire) {
    return switch (wire) {
      case "FILE_TYPE_FILE" -> FileType.FILE;
      case "FILE_TYPE_DIRECTORY" -> FileType.DIR;
      case "FILE_TYPE_SYMLINK" -> FileType.SYMLINK;
      default -> FileType.UNKNOWN;
    };
  }

  private static @Nullable Instant time(@Nullable String rfc3339) {
    if (rfc3339 == null) {
      return null;
    }
    try {
      return Instant.parse(rfc3339);
    } catch (DateTimeParseException e) {
      try {
        return java.time.OffsetDateTime.parse(rfc3339).toInstant();
      } catch (DateTimeParseException unreadable) {
        return null;
      }
    }
  }
}
