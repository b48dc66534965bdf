package io.sandboxes;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link EgressVerification#verifyEgress()} observed.
 *
 * @param state filtered (deny-by-default seen working), open (something not allowed answered), or
 *     inconclusive (nothing could be observed)
 * @param detail what was seen, with the probes' HTTP codes
 * @param remediation what to check, when there is something to do
 * @since 0.1
 */
public record EgressVerdict(State state, String detail, @Nullable String remediation) {

  /** The verdict. */
  public enum State {
    /** The allowed host answered and the denied host and raw IP were blocked. */
    FILTERED,
    /** A host or IP that is not allow-listed answered. */
    OPEN,
    /** The probe could not run, or observed nothing it could classify. */
    INCONCLUSIVE
  }

  /** Validates the components. */
  public EgressVerdict {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(detail, "detail");
  }
}
