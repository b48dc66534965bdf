package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#init(String, GitInitOptions)} makes a repository, as E2B's {@code git.init}
 * options {@code bare} and {@code initialBranch}. Immutable; each {@code with...} method returns a
 * copy.
 *
 * @param bare whether the repository has no working tree ({@code --bare})
 * @param initialBranch the name of the first branch ({@code --initial-branch}), or null for git's
 *     configured default
 * @since 0.1
 */
public record GitInitOptions(boolean bare, @Nullable String initialBranch) {

  /** Checks the components. */
  public GitInitOptions {
    if (initialBranch != null && initialBranch.isEmpty()) {
      throw new IllegalArgumentException("initialBranch must not be empty; leave it unset for git's default");
    }
  }

  /**
   * Options for a repository with a working tree and git's default first branch.
   *
   * @return the defaults
   */
  public static GitInitOptions defaults() {
    return new GitInitOptions(false, null);
  }

  /**
   * Returns a copy that makes a bare repository, one to push to.
   *
   * @return the copy
   */
  public GitInitOptions withBare() {
    return new GitInitOptions(true, initialBranch);
  }

  /**
   * Returns a copy whose first branch has this name.
   *
   * @param initialBranch e.g. {@code "main"}
   * @return the copy
   */
  public GitInitOptions withInitialBranch(String initialBranch) {
    return new GitInitOptions(bare, Objects.requireNonNull(initialBranch, "initialBranch"));
  }
}
