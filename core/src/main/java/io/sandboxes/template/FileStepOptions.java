package io.sandboxes.template;

import org.jspecify.annotations.Nullable;

/**
 * Options of the builder's file steps ({@link Template#remove}, {@link Template#rename},
 * {@link Template#makeDir}, {@link Template#makeSymlink}), E2B's option fields in one record. A
 * step refuses an option it has no use for (for example {@code recursive} on a rename) rather
 * than ignore it. Immutable; each {@code with...} method returns a copy.
 *
 * @param force {@code -f}: for remove, no error for a missing path; for rename and makeSymlink,
 *     replace what is at the destination
 * @param recursive {@code -r}, remove only: remove folders and what they hold
 * @param mode makeDir only: the new folders' mode, e.g. {@code 0750}, or {@code null} for the default
 * @param user the user to run the step as, or {@code null} for the user in effect
 * @since 0.1
 */
public record FileStepOptions(boolean force, boolean recursive, @Nullable Integer mode, @Nullable String user) {

  /** Validates the components. */
  public FileStepOptions {
    if (mode != null && (mode < 0 || mode > 07777)) {
      throw new IllegalArgumentException("mode must be 0 to 07777, got " + Integer.toOctalString(mode));
    }
    if (user != null) {
      Checks.requireUser(user);
    }
  }

  /**
   * No options: no force, not recursive, the default mode, the user in effect.
   *
   * @return the defaults
   */
  public static FileStepOptions defaults() {
    return new FileStepOptions(false, false, null, null);
  }

  /**
   * Sets {@code force}.
   *
   * @return a copy with it
   */
  public FileStepOptions withForce() {
    return new FileStepOptions(true, recursive, mode, user);
  }

  /**
   * Sets {@code recursive} (remove only).
   *
   * @return a copy with it
   */
  public FileStepOptions withRecursive() {
    return new FileStepOptions(force, true, mode, user);
  }

  /**
   * Sets the mode of the folders made (makeDir only).
   *
   * @param mode 0 to 07777
   * @return a copy with it
   */
  public FileStepOptions withMode(int mode) {
    return new FileStepOptions(force, recursive, mode, user);
  }

  /**
   * Runs the step as a user.
   *
   * @param user a user in the image, e.g. {@code root}
   * @return a copy with it
   */
  public FileStepOptions withUser(String user) {
    return new FileStepOptions(force, recursive, mode, Checks.requireUser(user));
  }
}
