package io.sandboxes.e2b;

import io.sandboxes.CommandFailedException;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.internal.Secrets;
import java.util.Objects;

/**
 * A git command run by {@link Git} exited non-zero, as the {@code CommandExitError} E2B's
 * {@code sandbox.git} throws. The message names what was attempted and ends with git's standard
 * error; {@link #result()} has the whole of it. Credentials the call was given are replaced by
 * {@code [redacted]} in both.
 *
 * <p>Two failures have types of their own, as on E2B: {@link GitAuthException} (the server wanted
 * credentials, or refused them) and {@link GitUpstreamException} (no upstream to push to or pull
 * from).
 *
 * @since 0.1
 */
public class GitException extends CommandFailedException {
  private static final long serialVersionUID = 1L;

  /** The message, made here rather than by the superclass, which knows no action. */
  private final String message;

  /**
   * Creates the exception.
   *
   * @param action what was attempted, e.g. {@code "push in /home/user/repo"}
   * @param result the failed command's result
   */
  public GitException(String action, ExecResult result) {
    this(action, result, "");
  }

  /**
   * Creates the exception with a sentence of the client's own after git's standard error.
   *
   * @param action what was attempted, e.g. {@code "push in /home/user/repo"}
   * @param result the failed command's result
   * @param advice what the caller can do about it; empty for nothing
   */
  protected GitException(String action, ExecResult result, String advice) {
    super(result);
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(advice, "advice");
    String stderr = Objects.requireNonNullElse(Secrets.redact(result.stderr()), "").strip();
    if (stderr.length() > 1000) {
      stderr = "…" + stderr.substring(stderr.length() - 1000);
    }
    this.message = Secrets.redact("git " + action + " failed with exit code " + result.exitCode()
        + (stderr.isEmpty() ? "" : ": " + stderr) + (advice.isEmpty() ? "" : " (" + advice + ")"));
  }

  /**
   * Returns what failed, with git's standard error.
   *
   * @return the message
   */
  @Override
  public String getMessage() {
    return message;
  }
}
