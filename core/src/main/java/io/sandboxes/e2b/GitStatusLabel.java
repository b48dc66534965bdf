package io.sandboxes.e2b;

/**
 * What happened to a file, as E2B's {@code GitStatusLabel}: one word for git's two status letters
 * (of the index and of the working tree), the first that applies in this order.
 *
 * @since 0.1
 */
public enum GitStatusLabel {
  /** Unmerged: either letter is {@code U}. */
  CONFLICT,
  /** Renamed ({@code R}). */
  RENAMED,
  /** Copied ({@code C}). */
  COPIED,
  /** Deleted ({@code D}). */
  DELETED,
  /** Added ({@code A}). */
  ADDED,
  /** Modified ({@code M}). */
  MODIFIED,
  /** Its type changed, e.g. a file became a symbolic link ({@code T}). */
  TYPECHANGE,
  /** Not tracked ({@code ?}). */
  UNTRACKED,
  /** Any other pair of letters. */
  UNKNOWN;

  static GitStatusLabel of(char index, char worktree) {
    String both = "" + index + worktree;
    String order = "URCDAMT?";
    for (int i = 0; i < order.length(); i++) {
      if (both.indexOf(order.charAt(i)) >= 0) {
        return values()[i];
      }
    }
    return UNKNOWN;
  }
}
