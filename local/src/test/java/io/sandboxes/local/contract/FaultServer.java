package io.sandboxes.local.contract;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real HTTP server on loopback that stands between the client and the real local server: it
 * records every request, forwards it (streaming, so long-lived process streams stay live), and
 * answers chosen requests itself with a scripted fault (a 503, a listing of an unknown shape, a
 * stream that ends without its end event, a slow answer).
 */
public final class FaultServer implements AutoCloseable {

  /**
   * One request as it crossed the wire; {@code client} is the address and port it came from, so
   * requests sent over one kept-alive connection share it.
   */
  public record Recorded(String method, String path, String query, Map<String, String> headers, byte[] body, long atNanos,
      String client) {
    public String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** A scripted answer: returns true when it answered, false to let the request through. */
  @FunctionalInterface
  public interface Fault {
    boolean answer(Recorded request, Response response, Callback callback) throws Exception;
  }

  private record Rule(Predicate<Recorded> when, Fault fault) {}

  private static final Set<String> HOP_HEADERS = Set.of("connection", "content-length", "transfer-encoding", "host", "upgrade",
      "keep-alive", "te", "trailer");

  private final URI target;
  private final Server server;
  private final ServerConnector connector;
  private final HttpClient client;
  private final List<Recorded> requests = new CopyOnWriteArrayList<>();
  private final List<Rule> rules = new CopyOnWriteArrayList<>();

  public FaultServer(URI target) throws Exception {
    this.target = target;
    this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .executor(Executors.newVirtualThreadPerTaskExecutor()).build();
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server = new Server(threads);
    connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        serve(request, response, callback);
        return true;
      }
    });
    server.start();
  }

  public URI url() {
    return URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  /** Answers requests matching {@code when} with {@code fault} (the last rule added wins). */
  public FaultServer on(Predicate<Recorded> when, Fault fault) {
    rules.add(0, new Rule(when, fault));
    return this;
  }

  public void clearFaults() {
    rules.clear();
  }

  public List<Recorded> requests() {
    return List.copyOf(requests);
  }

  public List<Recorded> requests(String method, String pathPrefix) {
    return requests.stream().filter(r -> r.method().equals(method) && r.path().startsWith(pathPrefix)).toList();
  }

  public void clearRequests() {
    requests.clear();
  }

  public static Predicate<Recorded> route(String method, String pathRegex) {
    return r -> r.method().equals(method) && r.path().matches(pathRegex);
  }

  /** Answers with a status and a JSON body. */
  public static Fault json(int status, String body) {
    return (req, resp, cb) -> {
      resp.setStatus(status);
      resp.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
      resp.write(true, java.nio.ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), cb);
      return true;
    };
  }

  /** One step of a scripted process stream: wait, then send a message (or end the stream). */
  public record Step(long afterMillis, @org.jspecify.annotations.Nullable String messageJson, boolean endOfStream) {
    public static Step send(long afterMillis, String json) {
      return new Step(afterMillis, json, false);
    }

    public static Step end(long afterMillis, String json) {
      return new Step(afterMillis, json, true);
    }

    /** Waits without sending anything (the stream stays open). */
    public static Step hold(long millis) {
      return new Step(millis, null, false);
    }
  }

  /** Answers with a Connect stream made of the given steps, as envd would send them. */
  public static Fault stream(Step... steps) {
    return (req, resp, cb) -> {
      resp.setStatus(200);
      resp.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/connect+json");
      OutputStream out = Content.Sink.asOutputStream(resp);
      try {
        for (Step step : steps) {
          Thread.sleep(step.afterMillis());
          if (step.messageJson() != null) {
            out.write(io.sandboxes.e2b.internal.Connect.envelope(step.endOfStream() ? 2 : 0,
                step.messageJson().getBytes(StandardCharsets.UTF_8)));
            out.flush();
          }
        }
        out.close();
        cb.succeeded();
      } catch (IOException e) {
        cb.failed(e);
      }
      return true;
    };
  }

  private void serve(Request request, Response response, Callback callback) throws Exception {
    byte[] body;
    try (InputStream in = Content.Source.asInputStream(request)) {
      body = in.readAllBytes();
    }
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    request.getHeaders().forEach(f -> headers.put(f.getName().toLowerCase(java.util.Locale.ROOT), f.getValue()));
    String query = request.getHttpURI().getQuery();
    Recorded rec = new Recorded(request.getMethod(), Request.getPathInContext(request), query == null ? "" : query, headers, body,
        System.nanoTime(), String.valueOf(request.getConnectionMetaData().getRemoteSocketAddress()));
    requests.add(rec);
    for (Rule rule : rules) {
      if (rule.when().test(rec) && rule.fault().answer(rec, response, callback)) {
        return;
      }
    }
    forward(rec, response, callback);
  }

  private void forward(Recorded rec, Response response, Callback callback) {
    try {
      HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(rec.path() + (rec.query().isEmpty() ? "" : "?" + rec.query())))
          .method(rec.method(), rec.body().length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(rec.body()));
      rec.headers().forEach((k, v) -> {
        if (!HOP_HEADERS.contains(k)) {
          b.header(k, v);
        }
      });
      HttpResponse<InputStream> answer = client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
      response.setStatus(answer.statusCode());
      answer.headers().map().forEach((k, vs) -> {
        if (!HOP_HEADERS.contains(k.toLowerCase(java.util.Locale.ROOT)) && !k.startsWith(":")) {
          vs.forEach(v -> response.getHeaders().add(k, v));
        }
      });
      OutputStream out = Content.Sink.asOutputStream(response);
      try (InputStream in = answer.body()) {
        byte[] buf = new byte[16 * 1024];
        int n;
        while ((n = in.read(buf)) >= 0) {
          out.write(buf, 0, n);
          out.flush();
        }
      }
      out.close();
      callback.succeeded();
    } catch (IOException | RuntimeException e) {
      callback.failed(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      callback.failed(e);
    }
  }

  @Override
  public void close() throws Exception {
    server.stop();
    client.shutdownNow();
    client.close();
  }
}
