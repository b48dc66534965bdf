package io.sandboxes.e2b;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#reset(String, GitResetOptions)} resets, as E2B's {@code git.reset} options
 * {@code mode}, {@code target} and {@code paths}. Immutable; each {@code with...} method returns a
 * copy.
 *
 * @param mode the mode, or null for git's default ({@code --mixed})
 * @param target the commit to reset to, or null for {@code HEAD}
 * @param paths the paths to reset (after {@code --}), empty for the whole tree
 * @since 0.1
 */
public record GitResetOptions(@Nullable GitResetMode mode, @Nullable String target, List<String> paths) {

  /** Checks and copies the components. */
  public GitResetOptions {
    paths = List.copyOf(Objects.requireNonNull(paths, "paths"));
    if (target != null && target.isEmpty()) {
      throw new IllegalArgumentException("target must not be empty; leave it unset for HEAD");
    }
  }

  /**
   * Options that run a plain {@code git reset}.
   *
   * @return the defaults
   */
  public static GitResetOptions defaults() {
    return new GitResetOptions(null, null, List.of());
  }

  /**
   * Returns a copy with this mode.
   *
   * @param mode the mode
   * @return the copy
   */
  public GitResetOptions withMode(GitResetMode mode) {
    return new GitResetOptions(Objects.requireNonNull(mode, "mode"), target, paths);
  }

  /**
   * Returns a copy that resets to this commit.
   *
   * @param target a commit, branch or tag, e.g. {@code "HEAD~1"}
   * @return the copy
   */
  public GitResetOptions withTarget(String target) {
    return new GitResetOptions(mode, Objects.requireNonNull(target, "target"), paths);
  }

  /**
   * Returns a copy that resets these paths only.
   *
   * @param paths paths relative to the repository
   * @return the copy
   */
  public GitResetOptions withPaths(List<String> paths) {
    return new GitResetOptions(mode, target, paths);
  }
}
