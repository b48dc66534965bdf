package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * One message of envd's process stream ({@code Start}/{@code Connect}): either output (its bytes,
 * decoded) or any other event ({@code start}, {@code end}, {@code keepalive}) as JSON.
 *
 * <p>Output is most of a busy stream, so its usual compact form,
 * {@code {"event":{"data":{"stdout":"<base64>"}}}}, is decoded straight from the bytes on the
 * wire, without a JSON tree or an intermediate string; anything else (other spacing, escapes,
 * more fields) takes the general JSON path and means the same.
 *
 * @param channel the output's channel, or null for an event that is not output
 * @param output the output's bytes, or null for an event that is not output
 * @param event the {@code event} object of a message that is not output; null for output
 */
public record ProcessMessage(@Nullable Channel channel, byte @Nullable [] output, @Nullable JsonNode event) {
  static {
    Base64Warmup.start(); // output is decoded in few, large calls: see there
  }

  /** Where output came from. */
  public enum Channel {
    STDOUT("stdout"),
    STDERR("stderr"),
    PTY("pty");

    private final String field;
    private final byte[] head;

    Channel(String field) {
      this.field = field;
      this.head = ("{\"event\":{\"data\":{\"" + field + "\":\"").getBytes(StandardCharsets.US_ASCII);
    }
  }

  private static final byte[] TAIL = "\"}}}".getBytes(StandardCharsets.US_ASCII);

  /** Whether this is output. */
  public boolean isOutput() {
    return output != null;
  }

  /**
   * The stream's next message.
   *
   * @return the message, or null after a successful end of stream
   * @throws SandboxException when the stream breaks, or a message is not JSON or holds output that
   *     is not base64
   */
  public static @Nullable ProcessMessage next(ConnectStream stream) {
    byte[] payload = stream.nextPayload();
    if (payload == null) {
      return null;
    }
    ProcessMessage fast = compactOutput(payload);
    if (fast != null) {
      return fast;
    }
    JsonNode event = stream.parse(payload).path("event");
    JsonNode data = event.get("data");
    if (data != null) {
      for (Channel c : Channel.values()) {
        JsonNode text = data.get(c.field);
        if (text != null) {
          try {
            return new ProcessMessage(c, Base64.getDecoder().decode(text.asText()), null);
          } catch (IllegalArgumentException e) {
            throw new SandboxException(stream.context() + ": output that is not base64: " + e.getMessage(), e);
          }
        }
      }
    }
    return new ProcessMessage(null, null, event);
  }

  /** The output of a message in the compact form, or null when it is in any other. */
  static @Nullable ProcessMessage compactOutput(byte[] payload) {
    for (Channel c : Channel.values()) {
      int from = c.head.length;
      int to = payload.length - TAIL.length;
      if (to < from || !startsWith(payload, c.head) || !Arrays.equals(payload, to, payload.length, TAIL, 0, TAIL.length)) {
        continue;
      }
      // a quote or a backslash (a second field, an escape) is not base64: the decoder refuses it,
      // and the general path reads the message
      try {
        ByteBuffer decoded = Base64.getDecoder().decode(ByteBuffer.wrap(payload, from, to - from));
        byte[] bytes = decoded.array();
        if (decoded.arrayOffset() != 0 || decoded.remaining() != bytes.length) {
          bytes = Arrays.copyOfRange(bytes, decoded.arrayOffset() + decoded.position(),
              decoded.arrayOffset() + decoded.limit());
        }
        return new ProcessMessage(c, bytes, null);
      } catch (IllegalArgumentException e) {
        return null; // the general path reports it
      }
    }
    return null;
  }

  private static boolean startsWith(byte[] payload, byte[] head) {
    return payload.length >= head.length && Arrays.equals(payload, 0, head.length, head, 0, head.length);
  }
}
