package io.sandboxes;

import java.time.Duration;
import java.util.Objects;

/**
 * A command outlived its timeout ({@link ExecOptions#timeout()}) and the sandbox killed it. It
 * carries everything the command wrote before the kill, so a build that hung after printing its
 * first errors still shows them. Its {@link #code()} is the daemon's {@code deadline_exceeded}.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=command-timeout :
 * try {
 *   sandbox.exec("make", ExecOptions.defaults().withTimeout(Duration.ofMinutes(2)));
 * } catch (CommandTimeoutException e) {
 *   System.err.println("make hung after: " + e.stdout());
 * }
 * }
 *
 * @since 0.1
 */
public class CommandTimeoutException extends SandboxRpcException {
  private static final long serialVersionUID = 1L;

  /** The command that timed out. */
  private final String command;
  /** The timeout it had. */
  private final Duration timeout;
  /** Its standard output up to the kill. */
  private final String stdout;
  /** Its standard error up to the kill. */
  private final String stderr;

  /**
   * Creates the exception.
   *
   * @param command the command that timed out
   * @param timeout the timeout it had
   * @param stdout what it wrote to standard output before the kill
   * @param stderr what it wrote to standard error before the kill
   * @param cause how the timeout was reported (the daemon's {@code deadline_exceeded}, say)
   */
  public CommandTimeoutException(String command, Duration timeout, String stdout, String stderr, Throwable cause) {
    super("deadline_exceeded", "command timed out after " + Objects.requireNonNull(timeout, "timeout").toMillis()
        + " ms and was killed: " + Objects.requireNonNull(command, "command"), cause);
    this.command = command;
    this.timeout = timeout;
    this.stdout = Objects.requireNonNull(stdout, "stdout");
    this.stderr = Objects.requireNonNull(stderr, "stderr");
  }

  /**
   * The command that timed out.
   *
   * @return the command line as it was given
   */
  public String command() {
    return command;
  }

  /**
   * The timeout it had.
   *
   * @return the command's deadline, counted from its start
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * What the command wrote to standard output before it was killed.
   *
   * @return the text, empty when it wrote nothing
   */
  public String stdout() {
    return stdout;
  }

  /**
   * What the command wrote to standard error before it was killed.
   *
   * @return the text, empty when it wrote nothing
   */
  public String stderr() {
    return stderr;
  }
}
