package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * The control plane refused the API key, as E2B's {@code AuthenticationError}: with HTTP 401 the
 * key itself was not accepted (missing, malformed, unknown or revoked); with HTTP 403 the key is
 * known but may not do this (E2B answers it for a banned or blocked team, and for a resource of
 * another team). {@link #statusCode()} says which. Retrying with the same key does not help.
 *
 * <p>The key is never part of the message, whatever the server echoed.
 *
 * @since 0.1
 */
public class SandboxAuthenticationException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param statusCode 401 or 403
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "list sandboxes"}
   */
  public SandboxAuthenticationException(int statusCode, @Nullable String serverMessage, String context) {
    super(statusCode, serverMessage, context, statusCode == 401
        ? "the API key was refused: check E2B_API_KEY or the provider's apiKey"
        : "the API key may not do this");
  }

  /**
   * Creates the exception with the client's own advice, for a token other than the API key.
   *
   * @param statusCode 401 or 403
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted
   * @param advice what the caller can do about it
   * @since 0.1
   */
  protected SandboxAuthenticationException(int statusCode, @Nullable String serverMessage, String context, String advice) {
    super(statusCode, serverMessage, context, advice);
  }
}
