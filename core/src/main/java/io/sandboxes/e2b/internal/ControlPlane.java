package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;

/**
 * E2B's control-plane REST API: create, connect, read, list, time out and kill sandboxes.
 * Error bodies are {@code {code, message}}; a 404 becomes {@link SandboxNotFoundException} and
 * every other failure a {@link SandboxApiException} with its status and message.
 */
public final class ControlPlane {
  public static final String API_KEY_HEADER = "X-API-KEY";

  /** How many times a call answered 429 is sent again unless configured, as E2B's SDKs: 3. */
  public static final int DEFAULT_RETRIES = 3;
  /** The longest {@code Retry-After} read, in seconds (E2B's SDK's bound); a longer one is not waited for. */
  static final long MAX_RETRY_AFTER_SECONDS = 2_147_483;
  /** How long retries may wait in all when requests have no timeout, as E2B's SDK: 60 s. */
  static final Duration MAX_RETRY_WAIT_WITHOUT_TIMEOUT = Duration.ofSeconds(60);

  private final Http http;
  private final URI apiUrl;
  private final @Nullable String apiKey;
  private final int retries;
  /** Extra headers on every request, as E2B's {@code apiHeaders}; checked by the caller. */
  private final Map<String, String> headers;

  public ControlPlane(Http http, URI apiUrl, @Nullable String apiKey) {
    this(http, apiUrl, apiKey, DEFAULT_RETRIES);
  }

  /**
   * @param retries how many times a call answered 429 with a {@code Retry-After} in seconds is
   *     sent again, 0 for never
   */
  public ControlPlane(Http http, URI apiUrl, @Nullable String apiKey, int retries) {
    this(http, apiUrl, apiKey, retries, Map.of());
  }

  private ControlPlane(Http http, URI apiUrl, @Nullable String apiKey, int retries, Map<String, String> headers) {
    if (retries < 0) {
      throw new IllegalArgumentException("retries must not be negative, got " + retries);
    }
    this.http = http;
    this.apiUrl = apiUrl;
    this.apiKey = apiKey;
    this.retries = retries;
    this.headers = Map.copyOf(headers);
    Secrets.hold(this, apiKey);
  }

  /** The same control plane and key, sending through {@code http} with {@code retries}. */
  public ControlPlane with(Http http, int retries) {
    return new ControlPlane(http, apiUrl, apiKey, retries, headers);
  }

  /**
   * A control plane at {@code apiUrl} with {@code apiKey} (null keeps this one's), whose requests
   * carry {@code headers} besides the client's own (a name of the client's own is replaced, the
   * key's never: the caller refuses it).
   */
  public ControlPlane with(URI apiUrl, @Nullable String apiKey, Map<String, String> headers) {
    return new ControlPlane(http, apiUrl, apiKey == null ? this.apiKey : apiKey, retries, headers);
  }

  public Map<String, String> headers() {
    return headers;
  }

  public int retries() {
    return retries;
  }

  /** One page of a listing: the rows as the server sent them and the next-page token. */
  public record Page(List<JsonNode> rows, @Nullable String nextToken) {}

  /** Creates a sandbox at {@code POST /v2/sandboxes}, the path the JS SDK 2.51 uses (always secured: no {@code secure}). */
  public JsonNode create(ObjectNode body) {
    return call("POST", "/v2/sandboxes", body, "create sandbox", null);
  }

  /** Connects at {@code POST /v2/sandboxes/{id}/connect}, as the JS SDK 2.51 does. */
  public JsonNode connect(String sandboxId, long timeoutSeconds) {
    return connect(sandboxId, timeoutSeconds, true);
  }

  /**
   * Connects, resuming a paused sandbox from its memory or, with {@code memory} false, by a cold
   * boot from its filesystem ({@code "memory": false}, E2B's {@code onResume: 'reboot'}).
   */
  public JsonNode connect(String sandboxId, long timeoutSeconds, boolean memory) {
    ObjectNode body = Json.object().put("timeout", timeoutSeconds);
    if (!memory) {
      body.put("memory", false);
    }
    return call("POST", "/v2/sandboxes/" + pathSegment(sandboxId) + "/connect", body, "connect to sandbox " + sandboxId, sandboxId);
  }

  public JsonNode info(String sandboxId) {
    return call("GET", "/sandboxes/" + pathSegment(sandboxId), null, "get sandbox " + sandboxId, sandboxId);
  }

  /** @return true when killed, false when the server says there was no such sandbox */
  public boolean kill(String sandboxId) {
    try {
      call("DELETE", "/sandboxes/" + pathSegment(sandboxId), null, "kill sandbox " + sandboxId, sandboxId);
      return true;
    } catch (SandboxNotFoundException e) {
      return false;
    }
  }

  /**
   * Pauses a sandbox.
   *
   * @param keepMemory true for a memory snapshot (processes carry on after resume), false for a
   *     filesystem-only pause
   * @return true when paused now, false when it was already paused (HTTP 409)
   */
  public boolean pause(String sandboxId, boolean keepMemory) {
    ObjectNode body = Json.object().put("memory", keepMemory);
    try {
      call("POST", "/sandboxes/" + pathSegment(sandboxId) + "/pause", body, "pause sandbox " + sandboxId, sandboxId);
      return true;
    } catch (SandboxApiException e) {
      if (e.statusCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  /** Replaces a sandbox's network policy. */
  public void updateNetwork(String sandboxId, List<String> allowOut, List<String> denyOut) {
    ObjectNode body = Json.object();
    allowOut.forEach(body.putArray("allowOut")::add);
    denyOut.forEach(body.putArray("denyOut")::add);
    updateNetwork(sandboxId, body);
  }

  /** Replaces a sandbox's network policy with this body ({@code SandboxNetworkUpdateConfig}). */
  public void updateNetwork(String sandboxId, ObjectNode body) {
    HttpResponse<byte[]> r = exchange("PUT", "/sandboxes/" + pathSegment(sandboxId) + "/network", body, "update network of sandbox " + sandboxId);
    if (r.statusCode() == 404) {
      throw new SandboxNotFoundException(sandboxId, String.valueOf(errorMessage(r)));
    }
  }

  public void setTimeout(String sandboxId, long timeoutSeconds) {
    ObjectNode body = Json.object().put("timeout", timeoutSeconds);
    call("POST", "/sandboxes/" + pathSegment(sandboxId) + "/timeout", body, "set timeout of sandbox " + sandboxId, sandboxId);
  }

  /**
   * Reads a listing page at {@code GET /v2/sandboxes}, with the query parameters E2B's SDKs send.
   *
   * @param startedAfter RFC 3339, or null
   * @param template a template id or alias, or null
   * @param order {@code asc}, {@code desc}, or null for the server's default
   */
  public Page list(List<String> states, Map<String, String> metadata, int limit, @Nullable String nextToken,
      @Nullable String startedAfter, @Nullable String template, @Nullable String order) {
    StringJoiner query = new StringJoiner("&", "?", "");
    if (!states.isEmpty()) {
      query.add("state=" + enc(String.join(",", states)));
    }
    if (!metadata.isEmpty()) {
      query.add("metadata=" + enc(encodeMetadata(metadata)));
    }
    if (startedAfter != null) {
      query.add("startedAfter=" + enc(startedAfter));
    }
    if (template != null) {
      query.add("template=" + enc(template));
    }
    if (order != null) {
      query.add("order=" + enc(order));
    }
    query.add("limit=" + limit);
    if (nextToken != null) {
      query.add("nextToken=" + enc(nextToken));
    }
    return page(exchange("GET", "/v2/sandboxes" + query, null, "list sandboxes"), "list sandboxes");
  }

  /** A listing page: the rows (which must be an array) and the {@code X-Next-Token}, if any. */
  private static Page page(HttpResponse<byte[]> r, String context) {
    return new Page(rows(r, context), r.headers().firstValue("x-next-token").filter(t -> !t.isEmpty()).orElse(null));
  }

  /** @return the answer of a GET, or null when the server says 404/501 (it has no such endpoint) */
  public @Nullable JsonNode getOptional(String path, String context) {
    HttpResponse<byte[]> r;
    try {
      r = exchange("GET", path, null, context);
    } catch (SandboxApiException e) {
      if (e.statusCode() == 501) {
        return null;
      }
      throw e;
    }
    return r.statusCode() == 404 ? null : readBody(r, context);
  }

  public URI apiUrl() {
    return apiUrl;
  }

  // ---- volumes ----

  public JsonNode createVolume(String name) {
    return call("POST", "/volumes", Json.object().put("name", name), "create volume " + name, null);
  }

  public List<JsonNode> listVolumes() {
    HttpResponse<byte[]> r = exchange("GET", "/volumes", null, "list volumes");
    return rows(r, "list volumes");
  }

  /** @return the volume, or null when the server says there is none */
  public @Nullable JsonNode getVolume(String volumeId) {
    HttpResponse<byte[]> r = exchange("GET", "/volumes/" + pathSegment(volumeId), null, "get volume " + volumeId);
    return r.statusCode() == 404 ? null : readBody(r, "get volume " + volumeId);
  }

  /** @return false when the server says there was no such volume */
  public boolean deleteVolume(String volumeId) {
    HttpResponse<byte[]> r = exchange("DELETE", "/volumes/" + pathSegment(volumeId), null, "delete volume " + volumeId);
    return r.statusCode() != 404;
  }

  // ---- secrets (E2B's /secrets; a secret is named by its id or its lower-case name) ----

  /** Creates a secret at {@code POST /secrets}: {@code {name, value, metadata}}; @return the {@code Secret} */
  public JsonNode createSecret(ObjectNode body) {
    return call("POST", "/secrets", body, "create secret " + Json.text(body, "name"), null);
  }

  /** Stores a new version at {@code POST /secrets/{secret}}: {@code {value, metadata}}; @return the {@code Secret}, or null on 404 */
  public @Nullable JsonNode updateSecret(String secret, ObjectNode body) {
    String context = "update secret " + secret;
    HttpResponse<byte[]> r = exchange("POST", "/secrets/" + seg(secret), body, context);
    return r.statusCode() == 404 ? null : readBody(r, context);
  }

  /** @return the {@code Secret} at {@code GET /secrets/{secret}}, or null on 404 */
  public @Nullable JsonNode getSecret(String secret) {
    String context = "get secret " + secret;
    HttpResponse<byte[]> r = exchange("GET", "/secrets/" + seg(secret), null, context);
    return r.statusCode() == 404 ? null : readBody(r, context);
  }

  /** One page of {@code GET /secrets?limit=&nextToken=}, the next token from {@code X-Next-Token}. */
  public Page listSecrets(int limit, @Nullable String nextToken) {
    return page(exchange("GET", "/secrets?limit=" + limit + (nextToken == null ? "" : "&nextToken=" + enc(nextToken)), null,
        "list secrets"), "list secrets");
  }

  /** @return false when the server says there was no such secret */
  public boolean deleteSecret(String secret) {
    return exchange("DELETE", "/secrets/" + seg(secret), null, "delete secret " + secret).statusCode() != 404;
  }

  // ---- snapshots and templates ----

  public JsonNode createSnapshot(String sandboxId, @Nullable String name) {
    ObjectNode body = Json.object();
    if (name != null) {
      body.put("name", name);
    }
    return call("POST", "/sandboxes/" + pathSegment(sandboxId) + "/snapshots", body, "snapshot sandbox " + sandboxId, sandboxId);
  }

  /**
   * Forks a sandbox.
   *
   * @return the answer: an array with one {@code {sandbox}} or {@code {error}} entry per fork
   */
  public JsonNode fork(String sandboxId, int count, long timeoutSeconds) {
    ObjectNode body = Json.object().put("timeout", timeoutSeconds).put("count", count);
    String context = "fork sandbox " + sandboxId;
    JsonNode answer = call("POST", "/sandboxes/" + pathSegment(sandboxId) + "/fork", body, context, sandboxId);
    if (!answer.isArray()) {
      throw new SandboxException(context + ": the server answered a fork of a shape this client cannot read: " + Json.abbreviate(answer));
    }
    return answer;
  }

  public Page listSnapshots(@Nullable String sandboxId, @Nullable String name, int limit, @Nullable String nextToken) {
    StringJoiner query = new StringJoiner("&", "?", "");
    if (sandboxId != null) {
      query.add("sandboxID=" + enc(sandboxId));
    }
    if (name != null) {
      query.add("name=" + enc(name));
    }
    query.add("limit=" + limit);
    if (nextToken != null) {
      query.add("nextToken=" + enc(nextToken));
    }
    return page(exchange("GET", "/snapshots" + query, null, "list snapshots"), "list snapshots");
  }

  /**
   * A sandbox's metric samples at {@code GET /sandboxes/{id}/metrics}.
   *
   * @param start Unix seconds, or null for the sandbox's start
   * @param end Unix seconds, or null for now
   * @return the answer, an array of samples
   */
  public JsonNode metrics(String sandboxId, @Nullable Long start, @Nullable Long end) {
    StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
    if (start != null) {
      query.add("start=" + start);
    }
    if (end != null) {
      query.add("end=" + end);
    }
    String context = "read metrics of sandbox " + sandboxId;
    JsonNode answer = call("GET", "/sandboxes/" + pathSegment(sandboxId) + "/metrics" + query, null, context, sandboxId);
    if (!answer.isArray()) {
      throw new SandboxException(context + ": the server answered metrics of a shape this client cannot read: " + Json.abbreviate(answer));
    }
    return answer;
  }

  /**
   * Looks a template alias up at {@code GET /templates/aliases/{alias}}, as E2B's
   * {@code Template.exists} does.
   *
   * @return the answer's status (200, 403 or 404) and, for 200, its body; any other status throws
   */
  public AliasAnswer templateAlias(String alias) {
    String context = "look up template alias " + alias;
    HttpResponse<byte[]> r;
    try {
      r = exchange("GET", "/templates/aliases/" + enc(alias).replace("+", "%20"), null, context);
    } catch (SandboxApiException e) {
      if (e.statusCode() == 403) {
        return new AliasAnswer(403, null);
      }
      throw e;
    }
    return r.statusCode() == 404 ? new AliasAnswer(404, null) : new AliasAnswer(r.statusCode(), readBody(r, context));
  }

  /** What an alias lookup answered: its status, and for 200 its body. */
  public record AliasAnswer(int status, @Nullable JsonNode body) {}

  /** @return false when the server says there was no such template */
  public boolean deleteTemplate(String templateId) {
    HttpResponse<byte[]> r = exchange("DELETE", "/templates/" + enc(templateId).replace("+", "%20"), null, "delete template " + templateId);
    return r.statusCode() != 404;
  }

  // ---- template builds (E2B's v2 build API) ----

  /** Requests a build at {@code POST /v3/templates}: {@code {name, tags, cpuCount, memoryMB}}; @return {@code {templateID, buildID, tags}} */
  public JsonNode requestTemplateBuild(ObjectNode body) {
    return call("POST", "/v3/templates", body, "request a build of template " + Json.text(body, "name"), null);
  }

  /** Asks whether a COPY's files are uploaded, at {@code GET /templates/{id}/files/{hash}}; @return {@code {present, url}} */
  public JsonNode templateFileLink(String templateId, String hash) {
    return call("GET", "/templates/" + seg(templateId) + "/files/" + seg(hash), null, "ask for the upload link of template files " + hash,
        null);
  }

  /** Starts a requested build at {@code POST /v2/templates/{id}/builds/{buildId}}. */
  public void startTemplateBuild(String templateId, String buildId, ObjectNode body) {
    HttpResponse<byte[]> r = exchange("POST", "/v2/templates/" + seg(templateId) + "/builds/" + seg(buildId), body,
        "start build " + buildId + " of template " + templateId);
    if (r.statusCode() == 404) {
      throw new SandboxApiException(404, errorMessage(r), "start build " + buildId + " of template " + templateId);
    }
  }

  /** A build's status and its log entries from {@code logsOffset} on, at {@code GET /templates/{id}/builds/{buildId}/status}. */
  public JsonNode templateBuildStatus(String templateId, String buildId, int logsOffset) {
    return call("GET", "/templates/" + seg(templateId) + "/builds/" + seg(buildId) + "/status?logsOffset=" + logsOffset, null,
        "read the status of build " + buildId + " of template " + templateId, null);
  }

  /** Points tags at the build a {@code name:tag} names, at {@code POST /templates/tags}; @return {@code {buildID, tags}} */
  public JsonNode assignTemplateTags(String target, List<String> tags) {
    ObjectNode body = Json.object().put("target", target);
    tags.forEach(body.putArray("tags")::add);
    return call("POST", "/templates/tags", body, "assign tags " + tags + " to template " + target, null);
  }

  /** Takes tags off a template, at {@code DELETE /templates/tags}. */
  public void removeTemplateTags(String name, List<String> tags) {
    ObjectNode body = Json.object().put("name", name);
    tags.forEach(body.putArray("tags")::add);
    String context = "remove tags " + tags + " from template " + name;
    HttpResponse<byte[]> r = exchange("DELETE", "/templates/tags", body, context);
    if (r.statusCode() == 404) {
      throw ApiErrors.of(404, errorMessage(r), context);
    }
  }

  /** A template's tags at {@code GET /templates/{id}/tags}; @return the answer's rows */
  public List<JsonNode> templateTags(String templateId) {
    String context = "list the tags of template " + templateId;
    return rows(exchange("GET", "/templates/" + seg(templateId) + "/tags", null, context), context);
  }

  private static String seg(String s) {
    return enc(s).replace("+", "%20");
  }

  private static List<JsonNode> rows(HttpResponse<byte[]> r, String context) {
    if (r.statusCode() == 404) {
      throw new SandboxApiException(404, errorMessage(r), context);
    }
    JsonNode body = readBody(r, context);
    if (!body.isArray()) {
      throw new SandboxException(context + ": the server answered a listing of a shape this client cannot read: "
          + Json.abbreviate(new String(r.body(), StandardCharsets.UTF_8)));
    }
    List<JsonNode> rows = new ArrayList<>();
    body.forEach(rows::add);
    return rows;
  }

  /**
   * The metadata filter as E2B's SDKs put it on the wire: each key and value encoded, joined as a
   * form string, and that string encoded once more (the query encoding is a third layer).
   */
  static String encodeMetadata(Map<String, String> metadata) {
    StringJoiner form = new StringJoiner("&");
    metadata.forEach((k, v) -> form.add(enc(enc(k)) + "=" + enc(enc(v))));
    return form.toString();
  }

  private JsonNode call(String method, String path, @Nullable JsonNode body, String context, @Nullable String sandboxId) {
    HttpResponse<byte[]> response = exchange(method, path, body, context);
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return readBody(response, context);
    }
    String message = errorMessage(response);
    if (status == 404 && sandboxId != null) {
      throw new SandboxNotFoundException(sandboxId, message == null ? "HTTP 404" : message);
    }
    throw ApiErrors.of(status, message, context);
  }

  private HttpResponse<byte[]> exchange(String method, String path, @Nullable JsonNode body, String context) {
    if (apiKey == null || apiKey.isBlank()) {
      throw new SandboxException("E2B provider requires an API key (config.apiKey or E2B_API_KEY)");
    }
    HttpRequest.Builder b = Identity.apiHeaders(http.request(apiUrl.resolve(path)));
    headers.forEach(b::setHeader);
    b.header(API_KEY_HEADER, apiKey)
        .header("Accept", "application/json");
    if (body != null) {
      b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<byte[]> response = send(b.build(), context);
    int status = response.statusCode();
    if ((status < 200 || status >= 300) && status != 404) {
      throw ApiErrors.of(status, errorMessage(response), context);
    }
    return response;
  }

  /**
   * Sends a call, and sends it again after a 429 whose {@code Retry-After} names a wait in whole
   * seconds, as E2B's SDKs do: up to {@link #retries} times, and only while the wait ends before
   * the call's deadline (its request timeout from the first send, or 60 s of waiting when requests
   * have no timeout). Each send gets the time left until that deadline. A 429 not retried is
   * thrown as {@link io.sandboxes.SandboxRateLimitException}, saying how often it was retried.
   * An interrupt during a wait ends the call with the interrupt flag kept.
   */
  private HttpResponse<byte[]> send(HttpRequest request, String context) {
    Duration timeout = http.requestTimeout();
    long start = System.nanoTime();
    long deadline = start + (timeout.isZero() ? MAX_RETRY_WAIT_WITHOUT_TIMEOUT : timeout).toNanos();
    HttpRequest attempt = request;
    for (int retried = 0; ; retried++) {
      HttpResponse<byte[]> response = http.send(attempt, context);
      if (response.statusCode() != 429) {
        return response;
      }
      @Nullable Long wait = retryAfterSeconds(response.headers().firstValue("retry-after").orElse(null));
      long now = System.nanoTime();
      if (wait == null || retried >= retries || wait * 1_000_000_000L >= deadline - now) {
        throw new io.sandboxes.SandboxRateLimitException(errorMessage(response), context,
            wait == null ? null : Duration.ofSeconds(wait), retried);
      }
      try {
        Thread.sleep(Duration.ofSeconds(wait));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SandboxException(context + ": interrupted while waiting " + wait + " s to retry after HTTP 429", e);
      }
      if (!timeout.isZero()) {
        long left = deadline - System.nanoTime();
        attempt = HttpRequest.newBuilder(request, (name, value) -> true).timeout(Duration.ofNanos(Math.max(left, 1_000_000L))).build();
      }
    }
  }

  /**
   * A {@code Retry-After} as E2B's SDKs read it: a whole number of seconds (digits only, at most
   * {@link #MAX_RETRY_AFTER_SECONDS}); an HTTP date, or anything else, is null (not retried).
   */
  static @Nullable Long retryAfterSeconds(@Nullable String value) {
    if (value == null) {
      return null;
    }
    String v = value.strip();
    if (v.isEmpty() || v.length() > 10 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    long seconds = Long.parseLong(v);
    return seconds <= MAX_RETRY_AFTER_SECONDS ? seconds : null;
  }

  static JsonNode readBody(HttpResponse<byte[]> response, String context) {
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new SandboxException(context + ": the server's answer is not JSON: "
          + Json.abbreviate(new String(response.body(), StandardCharsets.UTF_8)), e);
    }
  }

  static @Nullable String errorMessage(HttpResponse<byte[]> response) {
    String raw = new String(response.body(), StandardCharsets.UTF_8);
    try {
      JsonNode node = Json.parse(response.body());
      String message = Json.text(node, "message");
      if (message != null) {
        return message;
      }
    } catch (IOException | RuntimeException notJson) {
      // fall through to the raw body
    }
    return raw.isBlank() ? null : Json.abbreviate(raw.strip());
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static String pathSegment(String id) {
    if (id.isEmpty() || !id.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == '-' || c == '_')) {
      throw new IllegalArgumentException("sandbox id must be letters, digits, '-' or '_', got '" + id + "'");
    }
    return id;
  }
}
