package io.sandboxes;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The control plane answered HTTP 429 (too many requests), as E2B's {@code RateLimitError}, and the
 * client did not, or no longer could, wait and retry.
 *
 * <p>The client retries a control-plane call answered 429 by itself when the answer says how long
 * to wait as whole seconds ({@code Retry-After: 3}), up to
 * {@link io.sandboxes.e2b.E2BSandboxProvider.Builder#retries(int) retries} times (3 unless
 * configured), as long as the wait ends within the call's request timeout. This exception is the
 * 429 that was left: the retries were spent, the answer named no wait (or a date rather than
 * seconds), or its wait would have outlasted the request timeout.
 *
 * @since 0.1
 */
public class SandboxRateLimitException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /** The wait the last answer asked for, when it named one the client could read. */
  private final @Nullable Duration retryAfter;
  /** How many times the call was sent again after a 429 before this one. */
  private final int retried;

  /**
   * Creates the exception.
   *
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "create sandbox"}
   * @param retryAfter the wait the last answer's {@code Retry-After} asked for, or null when it
   *     named none the client could read
   * @param retried how many times the call had been sent again after a 429
   */
  public SandboxRateLimitException(@Nullable String serverMessage, String context, @Nullable Duration retryAfter, int retried) {
    super(429, serverMessage, context, "rate limited" + (retried == 0 ? "" : " after " + retried + (retried == 1 ? " retry" : " retries"))
        + (retryAfter == null ? "" : "; the server asked to wait " + retryAfter.toSeconds() + " s"));
    this.retryAfter = retryAfter;
    this.retried = retried;
  }

  /**
   * Returns the wait the server asked for before trying again.
   *
   * @return the last answer's {@code Retry-After} in seconds, or empty when it named none (or a
   *     date, which the client does not read)
   */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /**
   * Returns how many times the client sent the call again after a 429 before giving up.
   *
   * @return the retries made, 0 when none was
   */
  public int retried() {
    return retried;
  }
}
