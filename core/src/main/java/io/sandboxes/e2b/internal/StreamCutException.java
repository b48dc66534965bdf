package io.sandboxes.e2b.internal;

import io.sandboxes.SandboxException;

/**
 * A Connect stream that broke off: the connection failed or closed before the end-of-stream
 * message. It says nothing about why; a caller that can ask the control plane whether the sandbox
 * is still there (as E2B's own SDKs do) may throw something more precise.
 */
public final class StreamCutException extends SandboxException {
  private static final long serialVersionUID = 1L;

  StreamCutException(String message) {
    super(message);
  }

  StreamCutException(String message, Throwable cause) {
    super(message, cause);
  }
}
