package io.sandboxes;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link Sandbox#hibernate()} or {@link Sandbox#resume()} did.
 *
 * @param processesPreserved whether running processes carry on (true for a memory-keeping pause)
 * @param mechanism how: {@code pause} or {@code resume}
 * @param detail anything worth knowing, e.g. that the sandbox was already paused; null when none
 * @since 0.1
 */
public record HibernationOutcome(boolean processesPreserved, String mechanism, @Nullable String detail) {

  /** Validates the components. */
  public HibernationOutcome {
    Objects.requireNonNull(mechanism, "mechanism");
  }
}
