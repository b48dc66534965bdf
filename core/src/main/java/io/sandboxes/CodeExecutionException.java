package io.sandboxes;

/**
 * Thrown by {@link CodeExecution#orThrow()} when the code raised an error.
 *
 * @since 0.1
 */
public class CodeExecutionException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The execution (not serialised). */
  private final transient CodeExecution execution;

  /**
   * Makes the exception for an execution that raised an error.
   *
   * @param execution the execution; its {@link CodeExecution#error()} is not null
   */
  public CodeExecutionException(CodeExecution execution) {
    super("the code raised " + execution.errorSummary());
    this.execution = execution;
  }

  /**
   * Returns the execution, with what it printed and produced before the error.
   *
   * @return the execution, with what it printed and produced before the error
   */
  public CodeExecution execution() {
    return execution;
  }

  /**
   * Returns the error the code raised.
   *
   * @return the error the code raised
   */
  public CodeError error() {
    return java.util.Objects.requireNonNull(execution.error());
  }
}
