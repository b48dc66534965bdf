package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * The control plane answered HTTP 503 (service unavailable), as E2B's {@code ServiceBusyError}:
 * it has no capacity for this right now (no room to place a sandbox, or the node running it
 * declined a request it cannot serve yet). Nothing was changed by the refused call, so the same
 * call can be made again after a short wait; the client does not retry it by itself.
 *
 * @since 0.1
 */
public class SandboxServiceBusyException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "create sandbox"}
   */
  public SandboxServiceBusyException(@Nullable String serverMessage, String context) {
    super(503, serverMessage, context, "the service is busy; nothing was changed, try again shortly");
  }
}
