package io.sandboxes.e2b;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link Git#restore(String, GitRestoreOptions)} restores, as E2B's {@code git.restore}
 * options {@code paths}, {@code staged}, {@code worktree} and {@code source}. Immutable; each
 * {@code with...} method returns a copy.
 *
 * <p>As on E2B: with neither {@code staged} nor {@code worktree} set, the working tree is
 * restored; with only {@code staged} set to true, the index only; with only {@code worktree} set,
 * the working tree only. Both false is refused.
 *
 * @param paths the paths to restore; at least one
 * @param staged whether to restore the index ({@code --staged}), or null to decide as above
 * @param worktree whether to restore the working tree ({@code --worktree}), or null to decide as
 *     above
 * @param source the commit to restore from ({@code --source}), or null for git's default
 * @since 0.1
 */
public record GitRestoreOptions(List<String> paths, @Nullable Boolean staged, @Nullable Boolean worktree,
    @Nullable String source) {

  /** Checks and copies the components. */
  public GitRestoreOptions {
    paths = List.copyOf(Objects.requireNonNull(paths, "paths"));
    if (paths.isEmpty()) {
      throw new IllegalArgumentException("at least one path is required to restore");
    }
    if (Boolean.FALSE.equals(staged) && Boolean.FALSE.equals(worktree)) {
      throw new IllegalArgumentException("at least one of staged or worktree must be true");
    }
    if (source != null && source.isEmpty()) {
      throw new IllegalArgumentException("source must not be empty; leave it unset for git's default");
    }
  }

  /**
   * Options that restore these paths in the working tree.
   *
   * @param paths paths relative to the repository; at least one
   * @return the options
   */
  public static GitRestoreOptions of(String... paths) {
    return new GitRestoreOptions(List.of(paths), null, null, null);
  }

  /**
   * Returns a copy that does or does not restore the index.
   *
   * @param staged whether to restore the index
   * @return the copy
   */
  public GitRestoreOptions withStaged(boolean staged) {
    return new GitRestoreOptions(paths, staged, worktree, source);
  }

  /**
   * Returns a copy that does or does not restore the working tree.
   *
   * @param worktree whether to restore the working tree
   * @return the copy
   */
  public GitRestoreOptions withWorktree(boolean worktree) {
    return new GitRestoreOptions(paths, staged, worktree, source);
  }

  /**
   * Returns a copy that restores from this commit.
   *
   * @param source a commit, branch or tag
   * @return the copy
   */
  public GitRestoreOptions withSource(String source) {
    return new GitRestoreOptions(paths, staged, worktree, Objects.requireNonNull(source, "source"));
  }

  /** The index is restored: when asked, or by default never. */
  boolean restoresIndex() {
    return Boolean.TRUE.equals(staged);
  }

  /** The working tree is restored: when asked, or when the index was not asked for either. */
  boolean restoresWorktree() {
    return worktree != null ? worktree : !Boolean.TRUE.equals(staged);
  }
}
