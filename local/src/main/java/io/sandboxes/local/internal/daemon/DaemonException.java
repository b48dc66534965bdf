package io.sandboxes.local.internal.daemon;

import java.io.IOException;

/** A daemon call that failed, with the kind of failure the daemon (or the connection) reported. */
public final class DaemonException extends IOException {
  /** What went wrong; the numbers are the protocol's error kinds. */
  public enum Kind {
    NOT_FOUND(1), EXISTS(2), NOT_DIRECTORY(3), IS_DIRECTORY(4), PERMISSION(5), NO_SPACE(6), INVALID(7), BUSY(8),
    IO(9), UNSUPPORTED(10), NOT_EMPTY(11), CROSS_DEVICE(12), UNKNOWN_USER(13), PROTOCOL(14),
    /** Nothing listens on the port (ECONNREFUSED). */
    REFUSED(15),
    /** The connection to the daemon ended before the call did; the call's outcome is unknown. */
    DISCONNECTED(-1),
    /** An answer larger than the host accepts for one call. */
    TOO_LARGE(-2),
    /** The daemon did not answer within the call's deadline; the call's outcome is unknown. */
    TIMEOUT(-3),
    /** The host's bound on what one sandbox's daemon may have open (streams) is reached. */
    LIMIT(-4);

    final int code;

    Kind(int code) {
      this.code = code;
    }

    static Kind of(int code) {
      for (Kind k : values()) {
        if (k.code == code) {
          return k;
        }
      }
      return IO;
    }
  }

  private final Kind kind;
  private final int errno;

  DaemonException(Kind kind, int errno, String message) {
    super(message);
    this.kind = kind;
    this.errno = errno;
  }

  DaemonException(Kind kind, String message) {
    this(kind, 0, message);
  }

  /** What went wrong. */
  public Kind kind() {
    return kind;
  }

  /** The errno behind it inside the sandbox, or 0. */
  public int errno() {
    return errno;
  }
}
