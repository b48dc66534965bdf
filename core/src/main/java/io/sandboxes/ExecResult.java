package io.sandboxes;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a finished command produced. A non-zero exit code is data, not an exception: the caller
 * decides what failure means, or asks for an exception with {@link #orThrow()}.
 *
 * @param exitCode the process's exit code; never {@code 0} unless the process was observed to exit 0
 * @param stdout everything the process wrote to standard output, decoded as UTF-8
 * @param stderr everything the process wrote to standard error, decoded as UTF-8
 * @param duration wall time from the request to the exit report
 * @param error the daemon's own words on how the process ended when it did not exit 0 (E2B's
 *     {@code CommandResult.error}, e.g. {@code "exit status 3"} or {@code "signal: killed"}), or
 *     null when it said nothing (as for a clean exit) or the outcome is unknown
 * @since 0.1
 */
public record ExecResult(int exitCode, String stdout, String stderr, Duration duration, @Nullable String error) {

  /** Validates and normalises the components. */
  public ExecResult {
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
    Objects.requireNonNull(duration, "duration");
  }

  /**
   * A result without the daemon's error text.
   *
   * @param exitCode the process's exit code
   * @param stdout everything the process wrote to standard output
   * @param stderr everything the process wrote to standard error
   * @param duration wall time from the request to the exit report
   */
  public ExecResult(int exitCode, String stdout, String stderr, Duration duration) {
    this(exitCode, stdout, stderr, duration, null);
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
