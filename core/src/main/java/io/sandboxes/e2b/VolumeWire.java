package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ApiErrors;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Identity;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;

/**
 * E2B's volume content API on the wire ({@code /volumecontent/{volumeID}/dir|file|path}, the
 * {@code path} and the options as query parameters, the volume's token as
 * {@code Authorization: Bearer}), as E2B's SDK 2.51 and its published OpenAPI description of the
 * volume content API send it. A 404 is {@link VolumePathNotFoundException}; 401 and 403
 * {@link VolumeAuthenticationException}; other failures as the control plane's
 * ({@link ApiErrors}). No call is retried.
 */
final class VolumeWire {
  /** How long a whole-file read or write may take unless requests have no limit: E2B's SDK's file timeout, one hour. */
  static final Duration FILE_TIMEOUT = Duration.ofHours(1);
  /** The most of an error body read from a streamed answer. */
  private static final int MAX_ERROR_BODY = 64 * 1024;

  private final Http http;
  private final Http fileHttp;
  private final URI base;
  private final String volumeId;
  private final String token;

  VolumeWire(Http http, URI base, String volumeId, String token) {
    this.http = http;
    this.fileHttp = http.requestTimeout().isZero() || http.requestTimeout().compareTo(FILE_TIMEOUT) >= 0
        ? http : http.withRequestTimeout(FILE_TIMEOUT);
    this.base = base;
    this.volumeId = volumeId;
    this.token = token;
  }

  URI base() {
    return base;
  }

  /** The request for one operation: {@code kind} is {@code dir}, {@code file} or {@code path}. */
  HttpRequest.Builder request(Http via, String kind, String path, @Nullable VolumeWriteOptions options, @Nullable Integer depth) {
    StringJoiner q = new StringJoiner("&", "?", "");
    q.add("path=" + enc(path));
    if (depth != null) {
      q.add("depth=" + depth);
    }
    if (options != null) {
      if (options.uid() != null) {
        q.add("uid=" + options.uid());
      }
      if (options.gid() != null) {
        q.add("gid=" + options.gid());
      }
      if (options.mode() != null) {
        q.add("mode=" + options.mode());
      }
      if (options.force() != null) {
        q.add("force=" + options.force());
      }
    }
    String root = base.toString().endsWith("/") ? base.toString() : base + "/";
    URI uri = URI.create(root + "volumecontent/" + enc(volumeId) + "/" + kind + q);
    return Identity.apiHeaders(via.request(uri)).header("Authorization", "Bearer " + token);
  }

  Http http() {
    return http;
  }

  Http fileHttp() {
    return fileHttp;
  }

  /** Sends a request whose answer is JSON (or empty) and checks its status. */
  byte[] call(HttpRequest request, String path, String context) {
    HttpResponse<byte[]> r = http.send(request, context);
    check(r.statusCode(), r.body(), path, context);
    return r.body();
  }

  /** Sends a request on the file client and checks its status. */
  byte[] fileCall(HttpRequest request, String path, String context) {
    HttpResponse<byte[]> r = fileHttp.send(request, context);
    check(r.statusCode(), r.body(), path, context);
    return r.body();
  }

  /** Opens a download: the body as it arrives, once the status says it is the file. */
  InputStream stream(HttpRequest request, String path, String context) {
    HttpResponse<InputStream> r = fileHttp.stream(request, context);
    int status = r.statusCode();
    if (status >= 200 && status < 300) {
      return r.body();
    }
    byte[] body;
    try (InputStream in = r.body()) {
      body = in.readNBytes(MAX_ERROR_BODY);
    } catch (IOException e) {
      body = new byte[0];
    }
    check(status, body, path, context);
    throw new IllegalStateException("unreachable");
  }

  private static void check(int status, byte[] body, String path, String context) {
    if (status >= 200 && status < 300) {
      return;
    }
    String message = errorMessage(body);
    if (status == 404) {
      throw new VolumePathNotFoundException(path, message, context);
    }
    if (status == 401 || status == 403) {
      throw new VolumeAuthenticationException(status, message, context);
    }
    throw ApiErrors.of(status, message, context);
  }

  private static @Nullable String errorMessage(byte[] body) {
    String raw = new String(body, StandardCharsets.UTF_8);
    try {
      String message = Json.text(Json.parse(body), "message");
      if (message != null) {
        return message;
      }
    } catch (IOException | RuntimeException notJson) {
      // the raw body, below
    }
    return raw.isBlank() ? null : Json.abbreviate(raw.strip());
  }

  static VolumeEntry entry(byte[] body, String context) {
    try {
      return entry(Json.parse(body), context);
    } catch (IOException e) {
      throw new SandboxException(context + ": the server's answer is not JSON: "
          + Json.abbreviate(new String(body, StandardCharsets.UTF_8)), e);
    }
  }

  static List<VolumeEntry> entries(byte[] body, String context) {
    JsonNode node;
    try {
      node = Json.parse(body);
    } catch (IOException e) {
      throw new SandboxException(context + ": the server's answer is not JSON: "
          + Json.abbreviate(new String(body, StandardCharsets.UTF_8)), e);
    }
    if (!node.isArray()) {
      throw new SandboxException(context + ": the server answered a listing of a shape this client cannot read: " + Json.abbreviate(node));
    }
    List<VolumeEntry> out = new ArrayList<>();
    node.forEach(n -> out.add(entry(n, context)));
    return out;
  }

  /** One {@code VolumeEntryStat}; every field but {@code target} is required, as the API describes it. */
  static VolumeEntry entry(JsonNode n, String context) {
    try {
      return new VolumeEntry(Json.requireText(n, "name"), VolumeFileType.ofWire(Json.requireText(n, "type")),
          Json.requireText(n, "path"), requireLong(n, "size"), (int) requireLong(n, "mode"), requireLong(n, "uid"),
          requireLong(n, "gid"), time(n, "atime"), time(n, "mtime"), time(n, "ctime"), Json.text(n, "target"));
    } catch (RuntimeException e) {
      throw new SandboxException(context + ": an entry of a shape this client cannot read (" + e.getMessage() + "): "
          + Json.abbreviate(n), e);
    }
  }

  private static long requireLong(JsonNode n, String field) {
    Long v = Json.exactLong(n.get(field));
    if (v == null) {
      throw new IllegalArgumentException("no whole number '" + field + "'");
    }
    return v;
  }

  private static Instant time(JsonNode n, String field) {
    Instant t = Timestamps.instant(Json.requireText(n, field));
    if (t == null) {
      throw new IllegalArgumentException("'" + field + "' is no RFC 3339 time");
    }
    return t;
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
