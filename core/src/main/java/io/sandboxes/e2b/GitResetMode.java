package io.sandboxes.e2b;

import java.util.Locale;

/**
 * The mode of {@link Git#reset(String, GitResetOptions)}, as E2B's {@code GitResetMode}: git's
 * {@code --soft}, {@code --mixed}, {@code --hard}, {@code --merge} and {@code --keep}.
 *
 * @since 0.1
 */
public enum GitResetMode {
  /** Moves HEAD only. */
  SOFT,
  /** Moves HEAD and resets the index (git's default). */
  MIXED,
  /** Moves HEAD and resets the index and the working tree. */
  HARD,
  /** Resets, keeping local changes that the reset does not touch. */
  MERGE,
  /** Resets, refusing when a local change would be lost. */
  KEEP;

  /**
   * The option git is given for this mode.
   *
   * @return e.g. {@code --hard}
   */
  public String flag() {
    return "--" + name().toLowerCase(Locale.ROOT);
  }
}
