package io.sandboxes;

/**
 * The in-sandbox daemon (envd) reported an error on a Connect RPC, such as {@code not_found},
 * {@code invalid_argument} or {@code deadline_exceeded}. {@link #code()} is the Connect error code
 * string as it was on the wire.
 *
 * @since 0.1
 */
public class SandboxRpcException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The Connect error code, as it was on the wire. */
  private final String code;

  /**
   * Creates the exception; its message names what was attempted, the code and the daemon's
   * message.
   *
   * @param code the Connect error code, e.g. {@code "not_found"}
   * @param message the daemon's message
   * @param context what was being attempted
   */
  public SandboxRpcException(String code, String message, String context) {
    super(context + " failed: [" + code + "] " + message);
    this.code = io.sandboxes.e2b.internal.Secrets.redact(code);
  }

  /**
   * For subtypes that word their own message.
   *
   * @param code the Connect error code
   * @param message the whole message
   * @param cause the underlying failure
   */
  protected SandboxRpcException(String code, String message, Throwable cause) {
    super(message, cause);
    this.code = io.sandboxes.e2b.internal.Secrets.redact(code);
  }

  /**
   * Returns the Connect error code.
   *
   * @return the code string, e.g. {@code "not_found"} or {@code "unavailable"}
   */
  public String code() {
    return code;
  }
}
