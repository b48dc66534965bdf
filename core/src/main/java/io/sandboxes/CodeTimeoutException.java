package io.sandboxes;

import java.time.Duration;

/**
 * Thrown when a code execution did not end within its timeout. The client stopped waiting and
 * closed the stream, which makes the code interpreter interrupt the kernel; the context keeps
 * its state and takes the next execution once the interrupt lands.
 *
 * @since 0.1
 */
public class CodeTimeoutException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** What came before the timeout (not serialised). */
  private final transient CodeExecution partial;

  /** The timeout that passed. */
  private final Duration timeout;

  /**
   * Makes the exception.
   *
   * @param timeout the timeout that passed
   * @param partial what the execution produced before it
   */
  public CodeTimeoutException(Duration timeout, CodeExecution partial) {
    super("the code did not finish within " + timeout + "; its kernel was interrupted");
    this.timeout = timeout;
    this.partial = partial;
  }

  /**
   * Returns the timeout that passed.
   *
   * @return the timeout that passed
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Returns what the execution printed and produced before the timeout.
   *
   * @return what the execution printed and produced before the timeout
   */
  public CodeExecution partial() {
    return partial;
  }
}
