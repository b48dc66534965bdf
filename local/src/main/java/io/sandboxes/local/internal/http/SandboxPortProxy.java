package io.sandboxes.local.internal.http;

import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.http.HttpField;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays one HTTP request to a port inside a sandbox, as E2B's proxy does for a request whose
 * {@code E2b-Sandbox-Port} is not envd's: through the sandbox's port forward (its daemon makes the
 * TCP connection on the sandbox's loopback), the answer streamed back as it comes, so the code
 * interpreter's line-per-event stream arrives line by line. A client that goes away closes the
 * connection into the sandbox, which is how the code interpreter learns to interrupt its kernel.
 *
 * <p>What the sandbox sends is bounded where it is held: headers (count and size), never the
 * body, which is passed on in chunks. The request body is held whole, up to {@link #MAX_BODY}.
 */
final class SandboxPortProxy {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxPortProxy.class);
  /** The largest request body relayed (code to run, files posted to a service). */
  static final int MAX_BODY = 16 << 20;
  /** The most response headers passed back, and the largest one. */
  static final int MAX_HEADERS = 64;
  static final int MAX_HEADER_BYTES = 8 * 1024;
  private static final int CHUNK = 64 * 1024;
  /** Hop-by-hop headers, headers Java's client sets itself, and the routing and credentials meant for this server. */
  private static final Set<String> NOT_RELAYED = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
      "upgrade", "proxy-authorization", "proxy-authenticate", "host", "content-length", "expect", "http2-settings",
      "e2b-sandbox-id", "e2b-sandbox-port", "x-access-token", "e2b-traffic-access-token", "x-api-key");
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10))
      .followRedirects(HttpClient.Redirect.NEVER)
      .build();

  private SandboxPortProxy() {}

  static void relay(Exchange ex, LocalSandbox sandbox, int port) throws IOException {
    if (ex.request.getLength() > MAX_BODY) {
      ex.json(413, Json.object().put("code", 413).put("message", "the request body is larger than " + MAX_BODY + " bytes"));
      return;
    }
    byte[] body;
    try (InputStream in = ex.body()) {
      body = in.readNBytes(MAX_BODY + 1);
    }
    if (body.length > MAX_BODY) {
      ex.json(413, Json.object().put("code", 413).put("message", "the request body is larger than " + MAX_BODY + " bytes"));
      return;
    }
    URI base = sandbox.ports().forward(port, "127.0.0.1");
    String pathQuery = ex.request.getHttpURI().getPathQuery();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + (pathQuery == null || pathQuery.isEmpty() ? "/" : pathQuery)))
        .method(ex.method(), body.length == 0 && !ex.method().equals("POST") && !ex.method().equals("PUT")
            ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    for (HttpField f : ex.request.getHeaders()) {
      if (!NOT_RELAYED.contains(f.getLowerCaseName())) {
        try {
          b.header(f.getName(), f.getValue());
        } catch (IllegalArgumentException restricted) {
          // a header Java's client will not send; the service does without it
        }
      }
    }
    HttpResponse<InputStream> answer;
    try {
      answer = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      ex.json(502, Json.object().put("sandboxId", sandbox.id()).put("port", port).put("code", 502)
          .put("message", "The sandbox is running but port " + port + " is not open or closed the connection: " + e.getMessage()));
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    InputStream in = answer.body();
    try (in) {
      int kept = 0;
      for (Map.Entry<String, List<String>> h : answer.headers().map().entrySet()) {
        String name = h.getKey().toLowerCase(Locale.ROOT);
        if (NOT_RELAYED.contains(name) || name.equals("content-type") || name.startsWith(":")) {
          continue;
        }
        for (String v : h.getValue()) {
          if (kept < MAX_HEADERS && name.length() + v.length() <= MAX_HEADER_BYTES) {
            ex.response.getHeaders().add(h.getKey(), v);
            kept++;
          }
        }
      }
      String type = answer.headers().firstValue("content-type").orElse("application/octet-stream");
      OutputStream out = ex.stream(answer.statusCode(), type.length() <= MAX_HEADER_BYTES ? type : "application/octet-stream");
      byte[] buf = new byte[CHUNK];
      int n;
      while (true) {
        try {
          n = in.read(buf);
        } catch (IOException e) {
          // the sandbox reset the connection, or went away: the client sees a cut answer, not a whole one
          LOG.debug("port {} of sandbox {} failed mid-answer: {}", port, sandbox.id(), e.toString());
          ex.abort(e);
          return;
        }
        if (n < 0) {
          break;
        }
        try {
          out.write(buf, 0, n);
          out.flush();
        } catch (IOException e) {
          // the client left: closing the answer closes the connection into the sandbox
          LOG.debug("the client of port {} of sandbox {} left: {}", port, sandbox.id(), e.toString());
          ex.abort(e);
          return;
        }
      }
      ex.finish(out);
    }
  }
}
