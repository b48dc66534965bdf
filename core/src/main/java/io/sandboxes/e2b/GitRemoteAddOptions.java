package io.sandboxes.e2b;

/**
 * How {@link Git#remoteAdd(String, String, String, GitRemoteAddOptions)} adds a remote, as E2B's
 * {@code git.remoteAdd} options {@code fetch} and {@code overwrite}. Immutable; each
 * {@code with...} method returns a copy.
 *
 * @param fetch whether the remote is fetched once added
 * @param overwrite whether a remote of that name that exists already gets the new URL, instead of
 *     the call failing
 * @since 0.1
 */
public record GitRemoteAddOptions(boolean fetch, boolean overwrite) {

  /**
   * Options that add the remote without fetching, failing when it exists.
   *
   * @return the defaults
   */
  public static GitRemoteAddOptions defaults() {
    return new GitRemoteAddOptions(false, false);
  }

  /**
   * Returns a copy that fetches the remote once added.
   *
   * @return the copy
   */
  public GitRemoteAddOptions withFetch() {
    return new GitRemoteAddOptions(true, overwrite);
  }

  /**
   * Returns a copy that replaces the URL of a remote of that name that exists already.
   *
   * @return the copy
   */
  public GitRemoteAddOptions withOverwrite() {
    return new GitRemoteAddOptions(fetch, true);
  }
}
