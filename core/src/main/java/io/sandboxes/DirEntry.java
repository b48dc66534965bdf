package io.sandboxes;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One entry of {@link Sandbox#readDir(String)}.
 *
 * @param name the entry's name within the folder
 * @param type file, directory, or symlink (a link is reported as a link, never as its target's type)
 * @param size the size in bytes, when the sandbox reported a number
 * @param symlinkTarget where a symlink points, as the sandbox resolved it; null for other entries
 * @since 0.1
 */
public record DirEntry(String name, Type type, @Nullable Long size, @Nullable String symlinkTarget) {

  /** The kind of entry. */
  public enum Type {
    /** A regular file (or anything that is not a folder or a link). */
    FILE,
    /** A folder. */
    DIRECTORY,
    /** A symbolic link; see {@link DirEntry#symlinkTarget()}. */
    SYMLINK
  }

  /** Validates the components. */
  public DirEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }
}
