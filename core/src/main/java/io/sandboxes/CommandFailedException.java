package io.sandboxes;

/**
 * Thrown by {@link ExecResult#orThrow()} for a command that exited non-zero. Commands never throw
 * this on their own: a non-zero exit is data until the caller says otherwise.
 *
 * @since 0.1
 */
public class CommandFailedException extends SandboxException {
  private static final long serialVersionUID = 1L;

  private final transient ExecResult result;

  /**
   * Creates the exception; its message gives the exit code and the end of standard error.
   *
   * @param result the result of the failed command
   */
  public CommandFailedException(ExecResult result) {
    super("command exited with code " + result.exitCode() + tail(result.stderr()));
    this.result = result;
  }

  private static String tail(String stderr) {
    // redacted before it is cut, so a secret at the cut is not left half showing
    String s = io.sandboxes.e2b.internal.Secrets.redact(stderr).strip();
    if (s.isEmpty()) {
      return "";
    }
    return ": " + (s.length() > 500 ? "…" + s.substring(s.length() - 500) : s);
  }

  /**
   * Returns the failed command's result.
   *
   * @return the full result of the command
   */
  public ExecResult result() {
    return result;
  }
}
