package io.sandboxes;

import java.util.Objects;

/**
 * An error raised by code a code interpreter ran: data, like a non-zero exit code, not an
 * exception of this library (see {@link CodeExecution#orThrow()}).
 *
 * @param name the error's type, such as {@code ZeroDivisionError}; {@code DeadKernelError} when
 *     the kernel itself died (restart the context to go on)
 * @param value the error's message
 * @param traceback the kernel's traceback, lines joined with {@code \n} (it may hold ANSI colours)
 * @since 0.1
 */
public record CodeError(String name, String value, String traceback) {
  /** Validates the components. */
  public CodeError {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(traceback, "traceback");
  }
}
