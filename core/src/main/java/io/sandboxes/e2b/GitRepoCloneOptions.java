package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Git#clone(String, GitRepoCloneOptions)} clones, as E2B's {@code git.clone} options
 * {@code path}, {@code branch}, {@code depth}, {@code username}, {@code password} and
 * {@code dangerouslyStoreCredentials}. Immutable; each {@code with...} method returns a copy.
 *
 * @param path where the clone goes, or null for git's choice (the URL's last segment, in the
 *     command's working directory)
 * @param branch the only branch to clone ({@code --branch b --single-branch}), or null for all
 * @param depth how many commits of history to fetch ({@code --depth}), 0 for all of it
 * @param credentials the username and password for an HTTP(S) server, or null for none
 * @param dangerouslyStoreCredentials whether the credentials stay in the clone's {@code origin}
 *     URL, on disk in {@code .git/config}, for later fetches and pushes; {@code false} by default,
 *     when they are used for the clone only
 * @since 0.1
 */
public record GitRepoCloneOptions(@Nullable String path, @Nullable String branch, int depth,
    @Nullable GitCredentials credentials, boolean dangerouslyStoreCredentials) {

  /** Checks the components. */
  public GitRepoCloneOptions {
    if (depth < 0) {
      throw new IllegalArgumentException("depth must not be negative, got " + depth);
    }
    if (path != null && path.isEmpty()) {
      throw new IllegalArgumentException("path must not be empty; leave it unset for git's choice");
    }
    if (branch != null && branch.isEmpty()) {
      throw new IllegalArgumentException("branch must not be empty; leave it unset for all branches");
    }
    if (dangerouslyStoreCredentials && credentials == null) {
      throw new IllegalArgumentException("there are no credentials to store: give them with withCredentials");
    }
  }

  /**
   * Options that clone every branch with its whole history and no credentials.
   *
   * @return the defaults
   */
  public static GitRepoCloneOptions defaults() {
    return new GitRepoCloneOptions(null, null, 0, null, false);
  }

  /**
   * Returns a copy that clones into this path.
   *
   * @param path the destination in the sandbox
   * @return the copy
   */
  public GitRepoCloneOptions withPath(String path) {
    return new GitRepoCloneOptions(Objects.requireNonNull(path, "path"), branch, depth, credentials, dangerouslyStoreCredentials);
  }

  /**
   * Returns a copy that clones this branch only.
   *
   * @param branch the branch
   * @return the copy
   */
  public GitRepoCloneOptions withBranch(String branch) {
    return new GitRepoCloneOptions(path, Objects.requireNonNull(branch, "branch"), depth, credentials, dangerouslyStoreCredentials);
  }

  /**
   * Returns a copy that fetches this many commits of history.
   *
   * @param depth at least 1
   * @return the copy
   */
  public GitRepoCloneOptions withDepth(int depth) {
    if (depth < 1) {
      throw new IllegalArgumentException("depth must be at least 1, got " + depth);
    }
    return new GitRepoCloneOptions(path, branch, depth, credentials, dangerouslyStoreCredentials);
  }

  /**
   * Returns a copy that authenticates with these credentials, for the clone only.
   *
   * @param username the user name
   * @param password the password or token
   * @return the copy
   */
  public GitRepoCloneOptions withCredentials(String username, String password) {
    return new GitRepoCloneOptions(path, branch, depth, new GitCredentials(username, password), dangerouslyStoreCredentials);
  }

  /**
   * Returns a copy that leaves the credentials in the clone's {@code origin} URL, as E2B's
   * {@code dangerouslyStoreCredentials: true}: anything that can read the sandbox's files can
   * then read the password.
   *
   * @return the copy
   */
  public GitRepoCloneOptions withDangerouslyStoredCredentials() {
    return new GitRepoCloneOptions(path, branch, depth, credentials, true);
  }
}
