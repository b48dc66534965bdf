package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxRpcException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-sandbox daemon of one sandbox: Connect RPCs (unary and server-streaming, JSON) and the
 * {@code /files} REST endpoint. Every request carries the routing headers and the sandbox's own
 * access token.
 */
public final class Envd {
  public static final int PORT = 49983;
  public static final String SANDBOX_ID_HEADER = "E2b-Sandbox-Id";
  public static final String SANDBOX_PORT_HEADER = "E2b-Sandbox-Port";
  public static final String ACCESS_TOKEN_HEADER = "X-Access-Token";
  /** How often the server should send keepalive events on a quiet stream, in seconds. */
  public static final int KEEPALIVE_SECONDS = 50;

  private final Http http;
  private final String sandboxId;
  private final Unreachable unreachable;
  /** Where the daemon is and its token; null until a handle made by {@link #resolvedOnFirstUse} has looked. */
  private volatile @Nullable Address address;
  /** How a handle made by {@link #resolvedOnFirstUse} looks its address up; null for a handle given one. */
  private final @Nullable Supplier<Address> resolve;
  private final ReentrantLock resolving = new ReentrantLock();

  /**
   * Where a sandbox's daemon is reached and the access token it checks.
   *
   * @param base the daemon's base URL
   * @param accessToken the sandbox's token, or null for a sandbox that checks none
   */
  public record Address(URI base, @Nullable String accessToken) {}

  /**
   * What an HTTP 502 from the sandbox's address means. E2B's proxy answers it for a sandbox it
   * cannot route to, whether killed or paused ({@code "The sandbox was not found"}); only the
   * control plane can tell which, so the owner of this daemon handle decides.
   */
  @FunctionalInterface
  public interface Unreachable {
    /**
     * @param what the call that was refused, such as {@code "exec in sandbox <id>"}
     * @param message what the proxy said
     * @return the exception to throw
     */
    RuntimeException explain(String what, String message);
  }

  /** A daemon handle that reports every 502 as a sandbox that is not found, asking nobody. */
  public Envd(Http http, URI base, String sandboxId, @Nullable String accessToken) {
    this(http, base, sandboxId, accessToken, null);
  }

  /**
   * @param unreachable how a 502 is explained, or null to report it as not found
   */
  public Envd(Http http, URI base, String sandboxId, @Nullable String accessToken, @Nullable Unreachable unreachable) {
    this(http, sandboxId, null, unreachable);
    this.address = normalized(new Address(base, accessToken));
    Secrets.hold(this, accessToken);
  }

  private Envd(Http http, String sandboxId, @Nullable Supplier<Address> resolve, @Nullable Unreachable unreachable) {
    this.http = http;
    this.sandboxId = sandboxId;
    this.resolve = resolve;
    this.unreachable = unreachable != null ? unreachable : (what, message) -> new SandboxNotFoundException(sandboxId, message);
  }

  /**
   * A daemon handle whose address and token are looked up when it is first used, not when it is
   * made: what a listing hands out, so that listing asks the server nothing per sandbox. A look
   * that fails throws from the call that needed it and is tried again by the next call.
   *
   * @param resolve looks the address up; it throws when the sandbox cannot be reached (gone, paused)
   * @param unreachable how a 502 is explained, or null to report it as not found
   */
  public static Envd resolvedOnFirstUse(Http http, String sandboxId, Supplier<Address> resolve, @Nullable Unreachable unreachable) {
    return new Envd(http, sandboxId, java.util.Objects.requireNonNull(resolve, "resolve"), unreachable);
  }

  private static Address normalized(Address a) {
    URI base = a.base();
    return new Address(base.toString().endsWith("/") ? base : URI.create(base + "/"), a.accessToken());
  }

  /** The daemon's address, looked up now when this handle was made without one. */
  private Address address() {
    Address a = address;
    if (a != null) {
      return a;
    }
    resolving.lock(); // not synchronized: the look is a blocking HTTP call, which would pin a virtual thread
    try {
      a = address;
      if (a == null) {
        a = normalized(java.util.Objects.requireNonNull(resolve, "resolve").get());
        Secrets.hold(this, a.accessToken());
        address = a;
      }
      return a;
    } finally {
      resolving.unlock();
    }
  }

  public String sandboxId() {
    return sandboxId;
  }

  /** @return whether the daemon checks an access token (a secured sandbox): only then can a URL be signed */
  public boolean secured() {
    return address().accessToken() != null;
  }

  /**
   * envd's pre-signed URL signature: {@code "v1_" + base64(sha256(path:op:user:token[:expiration]))}
   * without padding, over the path exactly as it goes in the query.
   *
   * @param operation {@code read} or {@code write}
   * @param user the user, or empty for the daemon's default
   * @param expiration Unix seconds, or null for a signature that does not expire
   */
  public String signature(String path, String operation, String user, @Nullable Long expiration) {
    String accessToken = address().accessToken();
    if (accessToken == null) {
      throw new IllegalStateException("sandbox " + sandboxId + " has no access token: its URLs cannot be signed");
    }
    String raw = path + ":" + operation + ":" + user + ":" + accessToken + (expiration == null ? "" : ":" + expiration);
    try {
      byte[] hash = java.security.MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
      return "v1_" + Base64.getEncoder().withoutPadding().encodeToString(hash);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }

  /** @return the sandbox's code interpreter, at this daemon's address with its own port header */
  public CodeInterpreter codeInterpreter() {
    Address a = address();
    return new CodeInterpreter(http, a.base(), sandboxId, a.accessToken(), unreachable);
  }

  HttpRequest.Builder request(String path, @Nullable String user) {
    return request(http, path, user);
  }

  /** A request to the daemon through {@code via}, a view of this handle's client with its own timeout. */
  HttpRequest.Builder request(Http via, String path, @Nullable String user) {
    Address a = address();
    HttpRequest.Builder b = via.request(a.base().resolve(path))
        .header(SANDBOX_ID_HEADER, sandboxId)
        .header(SANDBOX_PORT_HEADER, Integer.toString(PORT));
    if (a.accessToken() != null) {
      b.header(ACCESS_TOKEN_HEADER, a.accessToken());
    }
    if (user != null) {
      String basic = Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8));
      b.header("Authorization", "Basic " + basic);
    }
    return b;
  }

  public JsonNode unary(String method, ObjectNode body, @Nullable String user, String context) {
    return unary(method, body, user, context, null, null);
  }

  /**
   * A unary call about one path: {@code not_found} becomes {@link SandboxFileNotFoundException}
   * and {@code permission_denied} {@link io.sandboxes.SandboxFilePermissionException}, both naming
   * {@code path}.
   *
   * @param path the path the call is about, or null for a call about none
   * @param timeout how long the call may take, or null for the client's request timeout
   */
  public JsonNode unary(String method, ObjectNode body, @Nullable String user, String context, @Nullable String path,
      @Nullable Duration timeout) {
    HttpRequest.Builder b = request(method, user)
        .header("Content-Type", Connect.UNARY_CONTENT_TYPE)
        .header(Connect.PROTOCOL_VERSION_HEADER, "1");
    if (timeout != null) {
      b.timeout(timeout);
    }
    HttpRequest req = b.POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))).build();
    HttpResponse<byte[]> response = http.send(req, context);
    if (response.statusCode() != 200) {
      throw rpcError(response.statusCode(), response.body(), context, path);
    }
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new SandboxException(context + ": unreadable answer from the sandbox daemon", e);
    }
  }

  /**
   * Opens a server stream.
   *
   * @param timeout the stream's deadline, sent as {@code Connect-Timeout-Ms}; zero for none
   */
  public ConnectStream stream(String method, ObjectNode body, @Nullable String user, Duration timeout, String context,
      @Nullable String path) {
    HttpRequest.Builder b = request(method, user)
        .header("Content-Type", Connect.STREAM_CONTENT_TYPE)
        .header(Connect.PROTOCOL_VERSION_HEADER, "1")
        .header(Connect.KEEPALIVE_HEADER, Integer.toString(KEEPALIVE_SECONDS));
    if (!timeout.isZero()) {
      b.header(Connect.TIMEOUT_HEADER, Long.toString(timeout.toMillis()));
    }
    HttpRequest req = b.POST(HttpRequest.BodyPublishers.ofByteArray(Connect.envelope(0, Json.bytes(body)))).build();
    HttpResponse<InputStream> response = http.stream(req, context);
    InputStream in = response.body();
    if (response.statusCode() != 200) {
      byte[] raw;
      try (in) {
        raw = in.readNBytes(64 * 1024);
      } catch (IOException e) {
        raw = new byte[0];
      }
      throw rpcError(response.statusCode(), raw, context, path);
    }
    String type = response.headers().firstValue("content-type").orElse("");
    if (!type.startsWith(Connect.STREAM_CONTENT_TYPE)) {
      closeQuietly(in);
      throw new SandboxException(context + ": unsupported content type '" + type + "' on a stream");
    }
    return new ConnectStream(in, context, (code, message) -> mapped(code, message, context, path));
  }

  /** This handle's client. */
  Http http() {
    return http;
  }

  /** The exception for an error answer of {@code /files}, its body already read. */
  RuntimeException filesError(int status, byte[] body, String path, String context) {
    String message = messageOf(body);
    if (status == 404) {
      return new SandboxFileNotFoundException(path, message);
    }
    if (status == 403) {
      return new io.sandboxes.SandboxFilePermissionException(path, message, context);
    }
    if (status == 502) {
      return unreachable.explain(context, message);
    }
    if (status == 507) {
      return new io.sandboxes.SandboxNotEnoughSpaceException(message, context);
    }
    return new SandboxException(context + " failed: HTTP " + status + ": " + message);
  }

  private RuntimeException rpcError(int status, byte[] body, String context, @Nullable String path) {
    if (status == 502) {
      return unreachable.explain(context, messageOf(body));
    }
    String code = Connect.codeForHttpStatus(status);
    String message = "HTTP " + status;
    try {
      JsonNode node = Json.parse(body);
      JsonNode c = node.get("code");
      if (c != null && c.isTextual()) {
        code = c.asText();
      }
      message = node.path("message").asText(message);
    } catch (IOException | RuntimeException notJson) {
      String raw = new String(body, StandardCharsets.UTF_8).strip();
      if (!raw.isEmpty()) {
        message = Json.abbreviate(raw);
      }
    }
    return mapped(code, message, context, path);
  }

  private RuntimeException mapped(String code, String message, String context, @Nullable String path) {
    if ("not_found".equals(code) && path != null) {
      return new SandboxFileNotFoundException(path, message);
    }
    if ("permission_denied".equals(code) && path != null) {
      return new io.sandboxes.SandboxFilePermissionException(path, message, context);
    }
    return new SandboxRpcException(code, message, context);
  }

  private static String messageOf(byte[] body) {
    try {
      JsonNode node = Json.parse(body);
      String m = Json.text(node, "message");
      if (m != null) {
        return m;
      }
    } catch (IOException | RuntimeException notJson) {
      // use the raw text
    }
    String raw = new String(body, StandardCharsets.UTF_8).strip();
    return raw.isEmpty() ? "(empty body)" : Json.abbreviate(raw);
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) {
      // aborting the exchange
    }
  }
}
