package io.sandboxes.e2b;

import io.sandboxes.ExecResult;

/**
 * A clone, push or pull failed because the git server wanted credentials or refused the ones
 * given, as E2B's {@code GitAuthError}: git said so on its standard error (authentication failed,
 * could not read a username with prompts disabled, access denied, and the like). Give
 * credentials in the call's options, or store them with {@link Git#dangerouslyAuthenticate}.
 *
 * @since 0.1
 */
public class GitAuthException extends GitException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param action what was attempted, e.g. {@code "push in /home/user/repo"}
   * @param result the failed command's result
   * @param advice what the caller can do about it
   */
  public GitAuthException(String action, ExecResult result, String advice) {
    super(action, result, advice);
  }
}
