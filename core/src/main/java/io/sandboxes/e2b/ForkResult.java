package io.sandboxes.e2b;

import io.sandboxes.SandboxApiException;
import org.jspecify.annotations.Nullable;

/**
 * What one requested fork of a sandbox came to, as E2B reports it: exactly one of the new
 * sandbox (running, with its own id) or the error that kept that fork from starting. The forks
 * of one request succeed or fail independently.
 *
 * @param sandbox the fork, when it started; close it to kill it
 * @param error why it did not start, with the status E2B gave that fork
 * @since 0.1
 */
public record ForkResult(@Nullable LiveSandbox sandbox, @Nullable SandboxApiException error) {

  /** Checks that exactly one of the components is set. */
  public ForkResult {
    if ((sandbox == null) == (error == null)) {
      throw new IllegalArgumentException("a fork result is either a sandbox or an error, not " + (sandbox == null ? "neither" : "both"));
    }
  }

  /**
   * Whether this fork started.
   *
   * @return true when {@link #sandbox()} is set
   */
  public boolean started() {
    return sandbox != null;
  }

  /**
   * The fork, or its error thrown.
   *
   * @return the forked sandbox
   * @throws SandboxApiException why this fork did not start
   */
  public LiveSandbox orThrow() {
    if (sandbox == null) {
      throw java.util.Objects.requireNonNull(error);
    }
    return sandbox;
  }
}
