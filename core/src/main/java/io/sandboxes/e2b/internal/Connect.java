package io.sandboxes.e2b.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The Connect protocol's framing and error codes, as envd speaks it with JSON encoding: unary
 * calls are plain JSON bodies; server streams are a sequence of envelopes (one flag byte, a
 * four-byte big-endian length, then the JSON), closed by one end-of-stream envelope whose JSON
 * carries the error, if any. Shared by the client and the local server.
 */
public final class Connect {
  public static final String PROTOCOL_VERSION_HEADER = "Connect-Protocol-Version";
  public static final String TIMEOUT_HEADER = "Connect-Timeout-Ms";
  public static final String KEEPALIVE_HEADER = "Keepalive-Ping-Interval";
  public static final String UNARY_CONTENT_TYPE = "application/json";
  public static final String STREAM_CONTENT_TYPE = "application/connect+json";

  public static final int FLAG_COMPRESSED = 0x01;
  public static final int FLAG_END_STREAM = 0x02;

  /** Envelopes larger than this are refused rather than buffered. */
  public static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

  private static final int DIRECT_READ_BYTES = 4 * 1024 * 1024;

  private Connect() {}

  public record Envelope(int flags, byte[] payload) {
    public boolean endStream() {
      return (flags & FLAG_END_STREAM) != 0;
    }
  }

  public static byte[] envelope(int flags, byte[] payload) {
    ByteBuffer buf = ByteBuffer.allocate(5 + payload.length);
    buf.put((byte) flags).putInt(payload.length).put(payload);
    return buf.array();
  }

  /**
   * Reads one envelope.
   *
   * @return the envelope, or null when the stream ended cleanly before its first byte
   * @throws EOFException when the stream ends inside an envelope
   */
  public static @Nullable Envelope read(InputStream in) throws IOException {
    int flags = in.read();
    if (flags < 0) {
      return null;
    }
    byte[] header = in.readNBytes(4);
    if (header.length < 4) {
      throw new EOFException("stream ended inside an envelope header");
    }
    int length = ByteBuffer.wrap(header).getInt();
    if (length < 0 || length > MAX_MESSAGE_BYTES) {
      throw new IOException("envelope length " + Integer.toUnsignedString(length) + " is out of range");
    }
    // up to a few MiB the payload goes straight into an array of its size; a larger declared
    // length is taken in steps, so a lying length costs no more memory than the bytes that came
    byte[] payload;
    if (length <= DIRECT_READ_BYTES) {
      payload = new byte[length];
      int got = in.readNBytes(payload, 0, length);
      if (got < length) {
        throw new EOFException("stream ended inside an envelope of " + length + " bytes (got " + got + ")");
      }
    } else {
      payload = in.readNBytes(length);
    }
    if (payload.length < length) {
      throw new EOFException("stream ended inside an envelope of " + length + " bytes (got " + payload.length + ")");
    }
    if ((flags & FLAG_COMPRESSED) != 0) {
      throw new IOException("compressed envelopes are not supported");
    }
    return new Envelope(flags, payload);
  }

  /** The HTTP status a server uses for a Connect error code. */
  public static int httpStatus(String code) {
    return switch (code) {
      case "canceled" -> 499;
      case "invalid_argument", "failed_precondition", "out_of_range" -> 400;
      case "deadline_exceeded" -> 504;
      case "not_found" -> 404;
      case "already_exists", "aborted" -> 409;
      case "permission_denied" -> 403;
      case "resource_exhausted" -> 429;
      case "unimplemented" -> 501;
      case "unavailable" -> 503;
      case "unauthenticated" -> 401;
      default -> 500;
    };
  }

  /** The Connect code a client derives from an HTTP status when the body names none. */
  public static String codeForHttpStatus(int status) {
    return switch (status) {
      case 400 -> "internal";
      case 401 -> "unauthenticated";
      case 403 -> "permission_denied";
      case 404 -> "unimplemented";
      case 429, 502, 503, 504 -> "unavailable";
      default -> "unknown";
    };
  }
}
