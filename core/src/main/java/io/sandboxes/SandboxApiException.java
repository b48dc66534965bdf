package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * A server answered with an error status: the control plane, or (for a few statuses) a sandbox's
 * daemon. Carries the HTTP status and the server's own message, so a caller can tell a refused key
 * (401) from an overloaded service (503).
 *
 * <p>The statuses a caller most often handles have subclasses of their own, as E2B's SDKs have
 * error classes for them: {@link SandboxAuthenticationException} (401 and 403: the API key was
 * refused, or may not do this), {@link SandboxRateLimitException} (429, once the client's retries
 * are spent), {@link SandboxServiceBusyException} (503) and {@link SandboxNotEnoughSpaceException}
 * (507). Code that catches this class catches them too.
 *
 * @since 0.1
 */
public class SandboxApiException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The HTTP status of the failed response. */
  private final int statusCode;
  /** The {@code message} of the error body, when it had one. */
  private final @Nullable String serverMessage;

  /**
   * Creates the exception; its message names what was attempted, the status and the server's
   * message.
   *
   * @param statusCode the HTTP status the server answered with
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "create sandbox"}
   */
  public SandboxApiException(int statusCode, @Nullable String serverMessage, String context) {
    this(statusCode, serverMessage, context, "");
  }

  /**
   * Creates the exception with a sentence of the client's own after the server's message.
   *
   * @param statusCode the HTTP status the server answered with
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "create sandbox"}
   * @param advice what the client adds, e.g. what it already tried; empty for nothing
   * @since 0.1
   */
  protected SandboxApiException(int statusCode, @Nullable String serverMessage, String context, String advice) {
    super(context + " failed: HTTP " + statusCode + (serverMessage == null ? "" : ": " + serverMessage)
        + (advice.isEmpty() ? "" : " (" + advice + ")"));
    this.statusCode = statusCode;
    this.serverMessage = io.sandboxes.e2b.internal.Secrets.redact(serverMessage);
  }

  /**
   * Returns the HTTP status the server answered with.
   *
   * @return the HTTP status code of the failed response
   */
  public int statusCode() {
    return statusCode;
  }

  /**
   * Returns the message the server put in its error body.
   *
   * @return the message (with the client's secrets redacted), or {@code null} when the body had none
   */
  public @Nullable String serverMessage() {
    return serverMessage;
  }
}
