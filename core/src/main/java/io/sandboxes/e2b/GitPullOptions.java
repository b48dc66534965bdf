package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#pull(String, GitPullOptions)} pulls, as E2B's {@code git.pull} options
 * {@code remote}, {@code branch}, {@code username} and {@code password}. Immutable; each
 * {@code with...} method returns a copy.
 *
 * @param remote the remote to pull from, or null for the branch's upstream (with credentials and no
 *     remote, the repository's only remote, as on E2B)
 * @param branch the remote branch to merge, or null for the upstream's
 * @param credentials the username and password for an HTTP(S) server, for this pull only, or null
 * @since 0.1
 */
public record GitPullOptions(@Nullable String remote, @Nullable String branch, @Nullable GitCredentials credentials) {

  /** Checks the components. */
  public GitPullOptions {
    if (remote != null && remote.isEmpty()) {
      throw new IllegalArgumentException("remote must not be empty; leave it unset for the upstream");
    }
    if (branch != null && branch.isEmpty()) {
      throw new IllegalArgumentException("branch must not be empty; leave it unset for the upstream");
    }
  }

  /**
   * Options that pull the branch's upstream without credentials.
   *
   * @return the defaults
   */
  public static GitPullOptions defaults() {
    return new GitPullOptions(null, null, null);
  }

  /**
   * Returns a copy that pulls from this remote.
   *
   * @param remote a remote's name, e.g. {@code "origin"}
   * @return the copy
   */
  public GitPullOptions withRemote(String remote) {
    return new GitPullOptions(Objects.requireNonNull(remote, "remote"), branch, credentials);
  }

  /**
   * Returns a copy that merges this remote branch.
   *
   * @param branch a branch's name on the remote
   * @return the copy
   */
  public GitPullOptions withBranch(String branch) {
    return new GitPullOptions(remote, Objects.requireNonNull(branch, "branch"), credentials);
  }

  /**
   * Returns a copy that authenticates with these credentials, for this pull only.
   *
   * @param username the user name
   * @param password the password or token
   * @return the copy
   */
  public GitPullOptions withCredentials(String username, String password) {
    return new GitPullOptions(remote, branch, new GitCredentials(username, password));
  }
}
