package io.sandboxes.e2b;

import io.sandboxes.SandboxApiException;
import org.jspecify.annotations.Nullable;

/**
 * The control plane has no secret of that id or name (HTTP 404), as E2B's {@code SecretNotFoundError}.
 *
 * @since 0.1
 */
public class SecretNotFoundException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /** The id or name that was looked for. */
  private final String secret;

  /**
   * Creates the exception.
   *
   * @param secret the id or name that was looked for
   * @param serverMessage the {@code message} of the error body, when it had one
   * @param context what was being attempted
   */
  public SecretNotFoundException(String secret, @Nullable String serverMessage, String context) {
    super(404, serverMessage, context);
    this.secret = secret;
  }

  /**
   * Returns the id or name that was looked for.
   *
   * @return the secret's id or name
   */
  public String secret() {
    return secret;
  }
}
