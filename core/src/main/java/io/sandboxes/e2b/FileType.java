package io.sandboxes.e2b;

/**
 * What a path in a sandbox is, as E2B's {@code FileType}. For a symbolic link the daemon reports
 * its target's type and sets {@link EntryInfo#symlinkTarget()}.
 *
 * @since 0.1
 */
public enum FileType {
  /** A regular file. */
  FILE,
  /** A folder. */
  DIR,
  /** A symbolic link whose target's type the daemon reported as a link. */
  SYMLINK,
  /**
   * The daemon did not say (a link whose target is gone, a socket, a device). E2B's JS SDK leaves
   * such entries out of a listing; this SDK keeps them, with this type, so a listing is whole.
   */
  UNKNOWN
}
