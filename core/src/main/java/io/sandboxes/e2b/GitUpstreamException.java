package io.sandboxes.e2b;

import io.sandboxes.ExecResult;

/**
 * A push or pull had no upstream to go to, as E2B's {@code GitUpstreamError}: the branch tracks
 * no remote branch and none was named. Name the remote and branch in the options, or push once
 * with {@link GitPushOptions#withSetUpstream(boolean) setUpstream} to a named remote.
 *
 * @since 0.1
 */
public class GitUpstreamException extends GitException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param action what was attempted, e.g. {@code "pull in /home/user/repo"}
   * @param result the failed command's result (git's own words on the missing upstream)
   * @param advice what the caller can do about it
   */
  public GitUpstreamException(String action, ExecResult result, String advice) {
    super(action, result, advice);
  }
}
