package io.sandboxes.e2b;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The local branches of a repository, as E2B's {@code GitBranches}.
 *
 * @param branches the names of the local branches, in git's order
 * @param currentBranch the branch checked out, or null when HEAD is detached (or no branch has a
 *     commit yet)
 * @since 0.1
 */
public record GitBranches(List<String> branches, @Nullable String currentBranch) {

  /** Copies the list. */
  public GitBranches {
    branches = List.copyOf(Objects.requireNonNull(branches, "branches"));
  }

  /**
   * The branch checked out.
   *
   * @return its name, or empty when HEAD is detached
   */
  public Optional<String> current() {
    return Optional.ofNullable(currentBranch);
  }
}
