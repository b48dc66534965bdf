package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * What envd's Connect calls share: their request messages (unary JSON, or one enveloped message
 * for a streaming call), the caller's user, the deadline and keepalive headers, and the answers
 * (a unary reply, a stream's messages, its end with an error).
 */
final class EnvdCalls {
  static final String DEFAULT_USER = "user";
  /** envd's own keepalive interval when the client names none. */
  static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(90);

  private EnvdCalls() {}

  /** One envd call on a sandbox, its sandbox found, awake and its token checked. */
  interface Call {
    void call(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException;
  }

  /** Connect's error: a unary call's answer, and what a stream's end carries. */
  record ConnectError(String code, String message) {
    static ConnectError of(RpcError e) {
      return new ConnectError(e.code(), String.valueOf(e.getMessage()));
    }
  }

  /** A stream's end message with an error. */
  record ErrorEnd(ConnectError error) {
    ErrorEnd(String code, String message) {
      this(new ConnectError(code, message));
    }
  }

  /** An empty message, or an empty part of one: {@code {}}. */
  @JsonInclude(JsonInclude.Include.NON_NULL) // any Jackson annotation lets a record without fields be written as {}
  record Nothing() {
    static final Nothing NOTHING = new Nothing();
  }

  static void rpcError(Exchange ex, RpcError e) {
    ex.bytes(Connect.httpStatus(e.code()), "application/json", bytes(ConnectError.of(e)));
  }

  /** The error of envd's REST routes ({@code /files}, {@code /health}): its HTTP status as its code. */
  record RestError(int code, String message) {}

  static void restError(Exchange ex, int status, String message) {
    ex.bytes(status, "application/json", bytes(new RestError(status, message)));
  }

  /** A unary reply written from a record. */
  static void reply(Exchange ex, Object body) {
    ex.bytes(200, Connect.UNARY_CONTENT_TYPE, bytes(body));
  }

  /** A record's JSON, as Jackson writes it (absent values left out). */
  static byte[] bytes(Object body) {
    try {
      return Json.MAPPER.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The user from {@code Authorization: Basic base64(user:)}, or the sandbox's default user. */
  static String user(Exchange ex) throws RpcError {
    String auth = ex.header("Authorization");
    if (auth == null || auth.isBlank()) {
      return DEFAULT_USER;
    }
    if (!auth.regionMatches(true, 0, "Basic ", 0, 6)) {
      throw new RpcError("unauthenticated", "unsupported Authorization scheme");
    }
    try {
      String decoded = new String(Base64.getDecoder().decode(auth.substring(6).strip()), StandardCharsets.UTF_8);
      String name = decoded.contains(":") ? decoded.substring(0, decoded.indexOf(':')) : decoded;
      return checkUser(name);
    } catch (IllegalArgumentException e) {
      throw new RpcError("unauthenticated", "malformed Authorization header");
    }
  }

  static String checkUser(String name) throws RpcError {
    if (name.isEmpty()) {
      return DEFAULT_USER;
    }
    if (!name.matches("[a-z_][a-z0-9_-]{0,31}")) {
      throw new RpcError("unauthenticated", "invalid user: '" + name + "'");
    }
    return name;
  }

  static String requirePath(@Nullable String p, String field) throws RpcError {
    if (p == null || p.isEmpty()) {
      throw new RpcError("invalid_argument", "'" + field + "' is required");
    }
    return p;
  }

  static JsonNode unaryRequest(Exchange ex) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    if (type == null || !type.startsWith(Connect.UNARY_CONTENT_TYPE)) {
      throw new RpcError("invalid_argument", "unary calls take Content-Type application/json, got " + type);
    }
    return parseObject(ex.bodyBytes());
  }

  private static JsonNode parseObject(byte[] raw) throws RpcError {
    try {
      JsonNode n = Json.parse(raw);
      if (!n.isObject()) {
        throw new RpcError("invalid_argument", "the request message must be a JSON object");
      }
      return n;
    } catch (IOException e) {
      throw new RpcError("invalid_argument", "the request message is not valid JSON");
    }
  }

  static JsonNode streamRequest(Exchange ex) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    if (type == null || !type.startsWith(Connect.STREAM_CONTENT_TYPE)) {
      throw new RpcError("invalid_argument", "streaming calls take Content-Type application/connect+json, got " + type);
    }
    try (InputStream in = ex.body()) {
      Connect.Envelope env = Connect.read(in);
      if (env == null) {
        throw new RpcError("invalid_argument", "the request has no message");
      }
      return parseObject(env.payload());
    }
  }

  static Duration timeoutHeader(Exchange ex) throws RpcError {
    String raw = ex.header(Connect.TIMEOUT_HEADER);
    if (raw == null || raw.isBlank()) {
      return Duration.ZERO;
    }
    try {
      long ms = Long.parseLong(raw.strip());
      if (ms < 0) {
        throw new NumberFormatException();
      }
      return Duration.ofMillis(ms);
    } catch (NumberFormatException e) {
      throw new RpcError("invalid_argument", "invalid " + Connect.TIMEOUT_HEADER + ": " + raw);
    }
  }

  static Duration keepalive(Exchange ex) {
    String raw = ex.header(Connect.KEEPALIVE_HEADER);
    if (raw != null) {
      try {
        long s = Long.parseLong(raw.strip());
        if (s > 0) {
          return Duration.ofSeconds(Math.min(s, 3600));
        }
      } catch (NumberFormatException ignored) {
        // fall back to envd's default
      }
    }
    return DEFAULT_KEEPALIVE;
  }

  /** Ends a streaming call that has not started with an error, as its only message. */
  static void streamError(Exchange ex, RpcError e) {
    ex.bytes(200, Connect.STREAM_CONTENT_TYPE, Connect.envelope(Connect.FLAG_END_STREAM, bytes(new ErrorEnd(ConnectError.of(e)))));
  }

  /** Writes one message of a stream, a record, and flushes it. */
  static void writeMessage(OutputStream out, Object message) throws IOException {
    out.write(Connect.envelope(0, bytes(message)));
    out.flush();
  }

  /**
   * Ends a stream begun with {@link Exchange#stream}: its last messages and its end message (records)
   * go out with the end of the answer's body in one write, so a client reads them together.
   */
  static void endStream(Exchange ex, Object end, Object... lastMessages) {
    java.io.ByteArrayOutputStream last = new java.io.ByteArrayOutputStream();
    for (Object m : lastMessages) {
      last.writeBytes(Connect.envelope(0, bytes(m)));
    }
    last.writeBytes(Connect.envelope(Connect.FLAG_END_STREAM, bytes(end)));
    ex.finishWith(last.toByteArray());
  }
}
