package io.sandboxes.local.internal.daemon;

import java.io.IOException;

/** A daemon broke the protocol: the connection it came on is dropped. */
final class ProtocolException extends IOException {
  ProtocolException(String message) {
    super(message);
  }
}
