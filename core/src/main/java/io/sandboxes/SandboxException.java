package io.sandboxes;

/**
 * Root of every exception this SDK throws. Unchecked: sandbox operations are remote calls whose
 * failures a caller handles where it makes sense, not at every call site.
 *
 * <p>Subtypes say what kind of failure it was: {@link SandboxNotFoundException} for a sandbox that
 * positively does not exist, {@link SandboxPausedException} for one that exists but is paused,
 * {@link SandboxFileNotFoundException} for a missing path inside one,
 * {@link SandboxApiException} for an HTTP-level refusal (with {@link SandboxAuthenticationException},
 * {@link SandboxRateLimitException}, {@link SandboxServiceBusyException} and
 * {@link SandboxNotEnoughSpaceException} for the statuses E2B's SDKs type),
 * {@link SandboxRpcException} for an error reported by the in-sandbox daemon.
 *
 * <p>Text that a server sent is put into these exceptions; the API key and the sandbox access
 * tokens the client holds are replaced by {@code [redacted]} in the message and in the causes'
 * messages (a cause that showed one is replaced by a redacted copy keeping its class name and
 * stack trace), whatever the server echoed.
 *
 * @since 0.1
 */
public class SandboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception with a message.
   *
   * @param message what failed, naming the sandbox or path where there is one
   */
  public SandboxException(String message) {
    super(io.sandboxes.e2b.internal.Secrets.redact(message));
  }

  /**
   * Creates the exception with a message and the failure that caused it.
   *
   * @param message what failed
   * @param cause the underlying failure
   */
  public SandboxException(String message, Throwable cause) {
    super(io.sandboxes.e2b.internal.Secrets.redact(message), io.sandboxes.e2b.internal.Secrets.redact(cause));
  }
}
