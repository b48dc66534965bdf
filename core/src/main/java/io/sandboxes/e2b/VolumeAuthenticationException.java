package io.sandboxes.e2b;

import io.sandboxes.SandboxAuthenticationException;
import org.jspecify.annotations.Nullable;

/**
 * The volume content API refused the volume's token (HTTP 401), or the token may not do this
 * (HTTP 403). Caught as {@link SandboxAuthenticationException}, as E2B's SDK throws its
 * {@code AuthenticationError}; the token is never part of the message.
 *
 * @since 0.1
 */
public class VolumeAuthenticationException extends SandboxAuthenticationException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param statusCode 401 or 403
   * @param serverMessage the {@code message} of the error body, when it had one
   * @param context what was being attempted
   */
  public VolumeAuthenticationException(int statusCode, @Nullable String serverMessage, String context) {
    super(statusCode, serverMessage, context, statusCode == 401
        ? "the volume's token was refused: connect to the volume again for a current one"
        : "the volume's token may not do this");
  }
}
