package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a sandbox's daemon says about a file it wrote, as E2B's {@code WriteInfo}: the answer of
 * {@link Filesystem#write(String, byte[])} and its kin, one per file.
 *
 * @param name the file's name, the last element of its path
 * @param type what was written ({@link FileType#FILE}), or null when the daemon did not say
 * @param path the file's absolute path, a relative path resolved against the user's home
 * @param metadata the metadata stored on the file, empty when none was given
 * @since 0.1
 */
public record WriteInfo(String name, @Nullable FileType type, String path, Map<String, String> metadata) {

  /** Validates and copies the components. */
  public WriteInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(path, "path");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
  }

  /** Reads one element of an upload's answer ({@code type} is {@code "file"}, {@code "dir"} or absent). */
  static WriteInfo of(JsonNode n) {
    String type = Json.text(n, "type");
    FileType t = type == null ? null : switch (type) {
      case "file" -> FileType.FILE;
      case "dir" -> FileType.DIR;
      case "symlink" -> FileType.SYMLINK;
      default -> FileType.UNKNOWN;
    };
    return new WriteInfo(n.path("name").asText(), t, n.path("path").asText(), Json.stringMap(n.get("metadata")));
  }
}
