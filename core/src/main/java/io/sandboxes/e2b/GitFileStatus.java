package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One changed file of a {@link GitStatus}, as E2B's {@code GitFileStatus}.
 *
 * @param name the path, relative to the repository's root
 * @param status what happened to it
 * @param indexStatus git's status letter for the index ({@code ' '} for unchanged, {@code '?'} for
 *     untracked)
 * @param workingTreeStatus git's status letter for the working tree
 * @param renamedFrom the path it had before a rename or copy, or null
 * @since 0.1
 */
public record GitFileStatus(String name, GitStatusLabel status, char indexStatus, char workingTreeStatus,
    @Nullable String renamedFrom) {

  /** Checks the components. */
  public GitFileStatus {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(status, "status");
  }

  /**
   * Tells whether the change is staged: the index's letter is neither blank nor {@code ?}.
   *
   * @return whether the index holds a change of this file
   */
  public boolean staged() {
    return indexStatus != ' ' && indexStatus != '?';
  }
}
