package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * A scripted stand-in for E2B's cloud in tests of what the local server does not serve: a real JDK
 * HTTP server on loopback, on virtual threads, that records every request (method, raw path and
 * query, headers, body, arrival time) and answers each as the test's {@link Script} says.
 */
final class ScriptedServer implements AutoCloseable {

  /** One request as it arrived. */
  record Request(String method, String path, @Nullable String query, Headers headers, byte[] body, long arrivedNanos) {
    /** {@code METHOD /path}. */
    String line() {
      return method + " " + path;
    }

    /** {@code METHOD /path?query}, the query left out when there is none. */
    String lineWithQuery() {
      return line() + (query == null ? "" : "?" + query);
    }

    @Nullable String header(String name) {
      return headers.getFirst(name);
    }

    /** The body as JSON, or null when there was none. */
    @Nullable JsonNode json() {
      try {
        return body.length == 0 ? null : Json.parse(body);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public String toString() {
      return lineWithQuery();
    }
  }

  /** One answer: a status, headers, a body (null for none) and how long to wait before answering. */
  record Answer(int status, Map<String, String> headers, @Nullable String body, Duration delay) {
    /** A JSON answer with headers given as name, value, name, value... */
    static Answer json(int status, String body, String... headers) {
      Map<String, String> h = new LinkedHashMap<>();
      for (int i = 0; i < headers.length; i += 2) {
        h.put(headers[i], headers[i + 1]);
      }
      return new Answer(status, h, body, Duration.ZERO);
    }

    /** E2B's error body, {@code {"code": status, "message": ...}}. */
    static Answer error(int status, String message, String... headers) {
      return json(status, "{\"code\":" + status + ",\"message\":\"" + message + "\"}", headers);
    }

    /** A status without a body. */
    static Answer empty(int status) {
      return new Answer(status, Map.of(), null, Duration.ZERO);
    }

    Answer after(Duration d) {
      return new Answer(status, headers, body, d);
    }
  }

  /** What the server answers a request. */
  @FunctionalInterface
  interface Script {
    Answer answer(Request request) throws IOException;
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Script script;

  private ScriptedServer(Script script) {
    this.script = script;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::answer);
    server.start();
  }

  static ScriptedServer start(Script script) {
    return new ScriptedServer(script);
  }

  /** {@code http://127.0.0.1:<port>}. */
  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Serves {@code path} (and below) with a handler of the test's own, for answers a script cannot give (streams). */
  void route(String path, HttpHandler handler) {
    server.createContext(path, handler);
  }

  /** Every request so far, in arrival order. */
  List<Request> requests() {
    return requests;
  }

  /** The requests with this method and raw path, in arrival order. */
  List<Request> requests(String method, String path) {
    return requests.stream().filter(r -> r.method().equals(method) && r.path().equals(path)).toList();
  }

  private void answer(HttpExchange ex) throws IOException {
    long at = System.nanoTime();
    byte[] in = ex.getRequestBody().readAllBytes();
    Request r = new Request(ex.getRequestMethod(), ex.getRequestURI().getRawPath(), ex.getRequestURI().getRawQuery(),
        ex.getRequestHeaders(), in, at);
    requests.add(r);
    Answer a = script.answer(r);
    try {
      Thread.sleep(a.delay());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.close();
      return;
    }
    a.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
    try {
      if (a.body() == null) {
        ex.sendResponseHeaders(a.status(), -1);
        ex.close();
        return;
      }
      byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    } catch (IOException clientGone) {
      ex.close();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
