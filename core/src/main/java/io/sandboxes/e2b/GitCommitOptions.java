package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#commit(String, String, GitCommitOptions)} commits, as E2B's {@code git.commit}
 * options {@code authorName}, {@code authorEmail} and {@code allowEmpty}. Immutable; each
 * {@code with...} method returns a copy.
 *
 * @param authorName the name to commit as (git's {@code user.name} for this commit only), or null
 *     for the configured one
 * @param authorEmail the email to commit as ({@code user.email} for this commit only), or null
 * @param allowEmpty whether a commit with no changes is made ({@code --allow-empty})
 * @since 0.1
 */
public record GitCommitOptions(@Nullable String authorName, @Nullable String authorEmail, boolean allowEmpty) {

  /**
   * Options that commit as the configured user, and only when something changed.
   *
   * @return the defaults
   */
  public static GitCommitOptions defaults() {
    return new GitCommitOptions(null, null, false);
  }

  /**
   * Returns a copy that commits as this author.
   *
   * @param name the author's name
   * @param email the author's email
   * @return the copy
   */
  public GitCommitOptions withAuthor(String name, String email) {
    return new GitCommitOptions(Objects.requireNonNull(name, "name"), Objects.requireNonNull(email, "email"), allowEmpty);
  }

  /**
   * Returns a copy that does or does not commit when nothing changed.
   *
   * @param allowEmpty whether to pass {@code --allow-empty}
   * @return the copy
   */
  public GitCommitOptions withAllowEmpty(boolean allowEmpty) {
    return new GitCommitOptions(authorName, authorEmail, allowEmpty);
  }
}
