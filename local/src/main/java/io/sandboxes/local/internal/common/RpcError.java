package io.sandboxes.local.internal.common;

/** An error to answer with: a Connect code for RPCs, mapped to an HTTP status for REST. */
public final class RpcError extends Exception {
  private static final long serialVersionUID = 1L;

  private final String code;

  public RpcError(String code, String message) {
    super(message, null, false, false);
    this.code = code;
  }

  public String code() {
    return code;
  }
}
