package io.sandboxes;

import java.time.Duration;
import java.util.Objects;

/**
 * What a finished command produced. A non-zero exit code is data, not an exception: the caller
 * decides what failure means, or asks for an exception with {@link #orThrow()}.
 *
 * @param exitCode the process's exit code; never {@code 0} unless the process was observed to exit 0
 * @param stdout everything the process wrote to standard output, decoded as UTF-8
 * @param stderr everything the process wrote to standard error, decoded as UTF-8
 * @param duration wall time from the request to the exit report
 * @since 0.1
 */
public record ExecResult(int exitCode, String stdout, String stderr, Duration duration) {

  /** Validates and normalises the components. */
  public ExecResult {
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
    Objects.requireNonNull(duration, "duration");
  }

  /**
   * Tells whether the command exited 0.
   *
   * @return {@code true} when the exit code is 0
   */
  public boolean isSuccess() {
    return exitCode == 0;
  }

  /**
   * Returns this result when the command succeeded, and throws otherwise.
   *
   * @return this result, for chaining
   * @throws CommandFailedException when the exit code is not 0; it carries this result
   */
  public ExecResult orThrow() {
    if (!isSuccess()) {
      throw new CommandFailedException(this);
    }
    return this;
  }
}
