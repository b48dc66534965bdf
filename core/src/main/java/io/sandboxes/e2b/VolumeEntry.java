package io.sandboxes.e2b;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A file, directory or link in a volume, as E2B's volume content API describes it (its
 * {@code VolumeEntryStat}).
 *
 * @param name the entry's base name
 * @param type what it is
 * @param path its path inside the volume
 * @param size its size in bytes
 * @param mode its permission bits (and the type bits, as the server sends them)
 * @param uid its owner's user id
 * @param gid its group id
 * @param atime when it was last read
 * @param mtime when it was last changed
 * @param ctime when its metadata last changed
 * @param target where a symbolic link points; null for anything else
 * @since 0.1
 */
public record VolumeEntry(String name, VolumeFileType type, String path, long size, int mode, long uid, long gid,
    Instant atime, Instant mtime, Instant ctime, @Nullable String target) {

  /** Validates the components. */
  public VolumeEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(atime, "atime");
    Objects.requireNonNull(mtime, "mtime");
    Objects.requireNonNull(ctime, "ctime");
  }
}
