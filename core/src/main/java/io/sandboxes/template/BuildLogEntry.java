package io.sandboxes.template;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One line of a template build's log, as the build's status endpoint reports it.
 *
 * @param timestamp when the server logged it
 * @param level {@code debug}, {@code info}, {@code warn} or {@code error} (a RUN's standard error
 *     is {@code warn} on the local runtime)
 * @param message the line
 * @param step the step it belongs to ({@code base}, {@code 1}, {@code 2}, ... in the template's
 *     order, {@code finalize}), or {@code null} when the server did not say
 * @since 0.1
 */
public record BuildLogEntry(Instant timestamp, String level, String message, @Nullable String step) {

  /** Validates the components. */
  public BuildLogEntry {
    Objects.requireNonNull(timestamp, "timestamp");
    Objects.requireNonNull(level, "level");
    Objects.requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return timestamp + " " + level + (step == null ? "" : " [" + step + "]") + " " + message;
  }
}
