package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#push(String, GitPushOptions)} pushes, as E2B's {@code git.push} options
 * {@code remote}, {@code branch}, {@code setUpstream}, {@code username} and {@code password}.
 * Immutable; each {@code with...} method returns a copy.
 *
 * @param remote the remote to push to, or null for git's choice (with credentials and no remote,
 *     the repository's only remote, as on E2B)
 * @param branch the branch to push, or null for git's choice
 * @param setUpstream whether a push to a named remote records it as the branch's upstream
 *     ({@code --set-upstream}); {@code true} by default, as on E2B
 * @param credentials the username and password for an HTTP(S) server, for this push only, or null
 * @since 0.1
 */
public record GitPushOptions(@Nullable String remote, @Nullable String branch, boolean setUpstream,
    @Nullable GitCredentials credentials) {

  /** Checks the components. */
  public GitPushOptions {
    if (remote != null && remote.isEmpty()) {
      throw new IllegalArgumentException("remote must not be empty; leave it unset for git's choice");
    }
    if (branch != null && branch.isEmpty()) {
      throw new IllegalArgumentException("branch must not be empty; leave it unset for git's choice");
    }
  }

  /**
   * Options that push as git would by default, setting the upstream when a remote is named.
   *
   * @return the defaults
   */
  public static GitPushOptions defaults() {
    return new GitPushOptions(null, null, true, null);
  }

  /**
   * Returns a copy that pushes to this remote.
   *
   * @param remote a remote's name, e.g. {@code "origin"}
   * @return the copy
   */
  public GitPushOptions withRemote(String remote) {
    return new GitPushOptions(Objects.requireNonNull(remote, "remote"), branch, setUpstream, credentials);
  }

  /**
   * Returns a copy that pushes this branch.
   *
   * @param branch a branch's name
   * @return the copy
   */
  public GitPushOptions withBranch(String branch) {
    return new GitPushOptions(remote, Objects.requireNonNull(branch, "branch"), setUpstream, credentials);
  }

  /**
   * Returns a copy that does or does not record the upstream.
   *
   * @param setUpstream whether to pass {@code --set-upstream} when a remote is named
   * @return the copy
   */
  public GitPushOptions withSetUpstream(boolean setUpstream) {
    return new GitPushOptions(remote, branch, setUpstream, credentials);
  }

  /**
   * Returns a copy that authenticates with these credentials, for this push only.
   *
   * @param username the user name
   * @param password the password or token
   * @return the copy
   */
  public GitPushOptions withCredentials(String username, String password) {
    return new GitPushOptions(remote, branch, setUpstream, new GitCredentials(username, password));
  }
}
