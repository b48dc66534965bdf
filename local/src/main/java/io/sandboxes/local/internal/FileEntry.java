package io.sandboxes.local.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A file-system entry as envd's {@code EntryInfo} message carries it, in its JSON field order:
 * written as it is by the HTTP layer, a symlink target left out when there is none and the
 * metadata when it is empty.
 *
 * @param name the last path element ({@code /} for the root)
 * @param type {@code FILE_TYPE_FILE}, {@code FILE_TYPE_DIRECTORY} or {@code FILE_TYPE_UNSPECIFIED};
 *     a symlink's is its target's
 * @param path the absolute path
 * @param size the size in bytes, as decimal text (protobuf's JSON for a 64-bit number)
 * @param mode the permission bits
 * @param permissions {@code ls -l}'s mode string
 * @param owner the owner's name
 * @param group the group's name
 * @param modifiedTime the modification time, ISO-8601
 * @param symlinkTarget for a symlink, its absolute target; else null
 * @param metadata the file's metadata, in key order
 */
public record FileEntry(String name, String type, String path, String size, int mode, String permissions, String owner,
    String group, String modifiedTime, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String symlinkTarget,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> metadata) {
  /** envd's type of a directory. */
  public static final String DIRECTORY = "FILE_TYPE_DIRECTORY";
}
