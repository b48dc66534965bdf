package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import java.io.IOException;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;

/**
 * The client side of a Connect server stream: yields each message, then ends on the end-of-stream
 * envelope, throwing the error it carries. A body that ends without that envelope is an error too:
 * nothing is inferred from a silent end.
 */
public final class ConnectStream implements AutoCloseable {
  private final InputStream body;
  private final String context;
  private final ErrorMapper errors;
  private boolean finished;
  /** Whether the end-of-stream envelope was read: the server has nothing more to send on it. */
  private boolean endRead;

  /** Turns a Connect error (code, message) into the exception the caller should see. */
  @FunctionalInterface
  public interface ErrorMapper {
    RuntimeException map(String code, String message);
  }

  ConnectStream(InputStream body, String context, ErrorMapper errors) {
    this.body = body;
    this.context = context;
    this.errors = errors;
  }

  /**
   * @return the next message, or null after a successful end of stream
   * @throws RuntimeException the mapped error of an end-of-stream envelope that carries one
   * @throws SandboxException when the stream breaks or ends without its end envelope
   */
  public @Nullable JsonNode next() {
    byte[] payload = nextPayload();
    return payload == null ? null : parse(payload);
  }

  /**
   * The next message's JSON, unparsed, for a reader with a faster path for messages it knows;
   * {@link #parse} reads any other.
   *
   * @return the payload, or null after a successful end of stream
   * @throws RuntimeException the mapped error of an end-of-stream envelope that carries one
   * @throws SandboxException when the stream breaks or ends without its end envelope
   */
  public byte @Nullable [] nextPayload() {
    if (finished) {
      return null;
    }
    Connect.Envelope env;
    try {
      env = Connect.read(body);
    } catch (IOException e) {
      finished = true;
      if (Thread.currentThread().isInterrupted()) {
        throw new SandboxException(context + ": interrupted", e);
      }
      throw new StreamCutException(context + ": stream broke: " + e.getMessage(), e);
    }
    if (env == null) {
      finished = true;
      throw new StreamCutException(context + ": stream ended without its end-of-stream message");
    }
    if (env.endStream()) {
      endRead = true;
      JsonNode json = parse(env.payload());
      finished = true;
      JsonNode error = json.get("error");
      if (error != null && !error.isNull()) {
        String code = error.path("code").asText("unknown");
        throw errors.map(code, error.path("message").asText(""));
      }
      return null;
    }
    return env.payload();
  }

  /**
   * Parses one message's JSON.
   *
   * @throws SandboxException (and ends the stream) when it is not JSON
   */
  public JsonNode parse(byte[] payload) {
    try {
      return Json.parse(payload);
    } catch (IOException e) {
      finished = true;
      throw new SandboxException(context + ": unreadable stream message: " + e.getMessage(), e);
    }
  }

  /** What this stream is, for error messages. */
  public String context() {
    return context;
  }

  @Override
  public void close() {
    finished = true;
    try {
      if (endRead && body instanceof Http1Connection.Body read) {
        read.closeAtContentEnd(); // its connection can be reused even before the body's last chunk arrives
      } else {
        body.close();
      }
    } catch (IOException ignored) {
      // closing aborts the exchange; there is nothing more to learn from it
    }
  }
}
