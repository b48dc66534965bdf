package io.sandboxes.template;

import org.jspecify.annotations.Nullable;

/**
 * Options of {@link Template#gitClone}, E2B's: the branch, the depth and the user. Immutable.
 *
 * @param branch the branch to clone alone ({@code --branch <b> --single-branch}), or {@code null}
 *     for the remote's default with every branch
 * @param depth how many commits of history ({@code --depth}), or 0 for all
 * @param user the user to run the clone as, or {@code null} for the user in effect
 * @since 0.1
 */
public record GitCloneOptions(@Nullable String branch, int depth, @Nullable String user) {

  /** Validates the components. */
  public GitCloneOptions {
    if (branch != null && (branch.isBlank() || branch.startsWith("-"))) {
      throw new IllegalArgumentException("branch must be a branch name, got '" + branch + "'");
    }
    if (depth < 0) {
      throw new IllegalArgumentException("depth must not be negative, got " + depth);
    }
    if (user != null) {
      Checks.requireUser(user);
    }
  }

  /**
   * The defaults: the remote's default branch, all of history, the user in effect.
   *
   * @return the defaults
   */
  public static GitCloneOptions defaults() {
    return new GitCloneOptions(null, 0, null);
  }

  /**
   * Clones one branch.
   *
   * @param branch the branch
   * @return a copy with it
   */
  public GitCloneOptions withBranch(String branch) {
    return new GitCloneOptions(java.util.Objects.requireNonNull(branch, "branch"), depth, user);
  }

  /**
   * Clones this many commits of history.
   *
   * @param depth from 1
   * @return a copy with it
   */
  public GitCloneOptions withDepth(int depth) {
    if (depth < 1) {
      throw new IllegalArgumentException("depth must be at least 1, got " + depth);
    }
    return new GitCloneOptions(branch, depth, user);
  }

  /**
   * Runs the clone as a user.
   *
   * @param user a user in the image
   * @return a copy with it
   */
  public GitCloneOptions withUser(String user) {
    return new GitCloneOptions(branch, depth, Checks.requireUser(user));
  }
}
