package io.sandboxes.e2b.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/**
 * HTTP/1.1 over plain {@code http://}, spoken on the caller's own thread: a kept-alive connection
 * taken from a small pool, the request written in one piece, the answer read as it comes. This is
 * what a local server is reached by, and for it {@code java.net.http} costs about a millisecond a
 * call in hand-offs between its selector thread, its executor and the caller, more than a whole
 * round trip to the sandbox's daemon; here no other thread takes part.
 *
 * <p>It takes only what it can send as {@code java.net.http} would ({@link #accepts}): a plain
 * {@code http} URL the default proxy selector sends direct, a body of known length (at most 1 MiB,
 * read from its publisher into memory), no {@code Expect: 100-continue}. Anything else goes to the
 * provider's {@code java.net.http} client. Its answers are {@link HttpResponse}s like that client's:
 * the request's timeout bounds the wait for the answer's head (and, for a body read whole, each wait
 * for more of it); a caller's interrupt ends the call with {@link InterruptedException}; a connection
 * the server closed while it was idle in the pool is never used, and one it closed just as it was
 * taken without answering is replaced once for an idempotent request (as {@code java.net.http}
 * does; a POST may have been read, and is not sent twice).
 */
final class Http1 implements AutoCloseable {
  /** Larger bodies go through {@code java.net.http}, which streams them. */
  static final int MAX_BODY = 1 << 20;
  /** A connection idle longer is closed, not reused: well inside servers' keep-alive (the local server's is 65 s). */
  static final Duration MAX_IDLE = Duration.ofSeconds(20);
  private static final int MAX_IDLE_PER_SERVER = 16;
  private static final int MAX_HEAD = 64 * 1024;
  private static final byte[] NO_BYTES = new byte[0];
  private static final java.util.Set<String> IDEMPOTENT = java.util.Set.of("GET", "HEAD", "PUT", "DELETE", "OPTIONS");

  private final Duration connectTimeout;
  private final ConcurrentHashMap<String, ConcurrentLinkedDeque<Http1Connection>> idle = new ConcurrentHashMap<>();
  private volatile boolean closed;

  Http1(Duration connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  /**
   * @return the request's body when this client can send the request, else null (send it with
   *     {@code java.net.http})
   */
  static byte @Nullable [] sendable(HttpRequest request) {
    URI uri = request.uri();
    if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null || uri.getRawUserInfo() != null
        || request.expectContinue() || request.version().filter(v -> v != HttpClient.Version.HTTP_1_1).isPresent()) {
      return null;
    }
    ProxySelector proxies = ProxySelector.getDefault();
    if (proxies != null) {
      List<Proxy> chosen = proxies.select(uri);
      if (chosen != null && chosen.stream().anyMatch(p -> p.type() != Proxy.Type.DIRECT)) {
        return null;
      }
    }
    Optional<HttpRequest.BodyPublisher> publisher = request.bodyPublisher();
    return publisher.isEmpty() ? NO_BYTES : bytesOf(publisher.get());
  }

  /** A publisher's bytes, when it says how many and they are few enough; else null. */
  private static byte @Nullable [] bytesOf(HttpRequest.BodyPublisher publisher) {
    long length = publisher.contentLength();
    if (length < 0 || length > MAX_BODY) {
      return null;
    }
    if (length == 0) {
      return NO_BYTES;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) length);
    CompletableFuture<byte[]> whole = new CompletableFuture<>();
    publisher.subscribe(new Flow.Subscriber<>() {
      @Override
      public void onSubscribe(Flow.Subscription s) {
        s.request(Long.MAX_VALUE);
      }

      @Override
      public void onNext(ByteBuffer item) {
        byte[] b = new byte[item.remaining()];
        item.get(b);
        out.write(b, 0, b.length);
      }

      @Override
      public void onError(Throwable t) {
        whole.completeExceptionally(t);
      }

      @Override
      public void onComplete() {
        whole.complete(out.toByteArray());
      }
    });
    try {
      // the JDK's in-memory and file publishers deliver on the subscribing thread: this is done already
      byte[] b = whole.get(30, TimeUnit.SECONDS);
      return b.length == length ? b : null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException e) {
      return null;
    }
  }

  /**
   * Sends a request whose body {@link #sendable} gave.
   *
   * @param stream whether the answer's body is handed over as a stream (else read whole)
   */
  HttpResponse<?> send(HttpRequest request, byte[] body, boolean stream) throws IOException, InterruptedException {
    long deadline = request.timeout().map(t -> System.nanoTime() + t.toNanos()).orElse(0L);
    byte[] head = head(request, body);
    String key = request.uri().getHost().toLowerCase(Locale.ROOT) + ":" + port(request.uri());
    for (int attempt = 0; ; attempt++) {
      Http1Connection c = attempt == 0 ? pooled(key) : null;
      boolean reused = c != null;
      if (c == null) {
        c = open(request.uri(), key, deadline);
      }
      try {
        c.out.write(head);
        c.out.write(body);
        c.out.flush();
        return answer(request, c, deadline, stream);
      } catch (Http1Connection.Stale e) {
        c.discard();
        if (!reused || !IDEMPOTENT.contains(request.method())) {
          throw new IOException("the server closed the connection without answering", e.getCause());
        }
        // closed by the server just as it was taken from the pool: an idempotent request goes once more, on a new
        // connection (as java.net.http does); any other might have been read, and is not sent twice
      } catch (IOException | RuntimeException e) {
        c.discard();
        throw translated(e, deadline);
      }
    }
  }

  private static IOException translated(Exception e, long deadline) throws InterruptedException {
    if (Thread.currentThread().isInterrupted() || e instanceof java.nio.channels.ClosedByInterruptException) {
      InterruptedException i = new InterruptedException("interrupted while waiting for the answer");
      i.initCause(e);
      throw i;
    }
    if (e instanceof SocketTimeoutException && deadline != 0) {
      HttpTimeoutException t = new HttpTimeoutException("request timed out");
      t.initCause(e);
      return t;
    }
    return e instanceof IOException io ? io : new IOException(e);
  }

  private static int port(URI uri) {
    return uri.getPort() < 0 ? 80 : uri.getPort();
  }

  private static byte[] head(HttpRequest request, byte[] body) {
    URI uri = request.uri();
    StringBuilder h = new StringBuilder(256);
    String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    h.append(request.method()).append(' ').append(path);
    if (uri.getRawQuery() != null) {
      h.append('?').append(uri.getRawQuery());
    }
    h.append(" HTTP/1.1\r\nHost: ").append(uri.getHost());
    if (uri.getPort() >= 0) {
      h.append(':').append(uri.getPort());
    }
    h.append("\r\n");
    request.headers().map().forEach((name, values) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (!lower.equals("host") && !lower.equals("content-length") && !lower.equals("connection")
          && !lower.equals("transfer-encoding")) {
        values.forEach(v -> h.append(name).append(": ").append(v).append("\r\n"));
      }
    });
    if (body.length > 0 || request.bodyPublisher().isPresent() && !request.method().equals("GET")) {
      h.append("Content-Length: ").append(body.length).append("\r\n");
    }
    h.append("\r\n");
    return h.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  private HttpResponse<?> answer(HttpRequest request, Http1Connection c, long deadline, boolean stream) throws IOException {
    int status;
    boolean http10;
    Map<String, List<String>> headers;
    for (boolean first = true; ; first = false) {
      c.timeout(deadline);
      String line = c.line(first); // an interim answer came first: the server has the request, so no retry past it
      if (!line.startsWith("HTTP/1.") || line.length() < 12 || line.charAt(8) != ' ') {
        throw new IOException("not an HTTP/1.1 answer: " + Json.abbreviate(line));
      }
      http10 = line.charAt(7) == '0';
      try {
        status = Integer.parseInt(line.substring(9, 12));
      } catch (NumberFormatException e) {
        throw new IOException("not an HTTP status: " + Json.abbreviate(line));
      }
      headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      int size = line.length();
      for (String h = c.line(false); !h.isEmpty(); h = c.line(false)) {
        size += h.length();
        if (size > MAX_HEAD) {
          throw new IOException("the answer's head is larger than " + MAX_HEAD + " bytes");
        }
        int colon = h.indexOf(':');
        if (colon <= 0) {
          throw new IOException("a malformed header line: " + Json.abbreviate(h));
        }
        headers.computeIfAbsent(h.substring(0, colon).strip(), k -> new ArrayList<>()).add(h.substring(colon + 1).strip());
      }
      if (status >= 100 && status < 200 && status != 101) {
        continue; // an interim answer: the final one follows
      }
      break;
    }
    if (status == 101) {
      throw new IOException("the server switched protocols, which was not asked for");
    }
    HttpHeaders hh = HttpHeaders.of(headers, (a, b) -> true);
    String connection = hh.firstValue("connection").orElse("").toLowerCase(Locale.ROOT);
    boolean keep = http10 ? connection.contains("keep-alive") : !connection.contains("close");
    Http1Connection.Body body;
    if (request.method().equals("HEAD") || status == 204 || status == 304) {
      body = new Http1Connection.Body(c, 0, false, keep);
    } else if (hh.firstValue("transfer-encoding").map(v -> v.toLowerCase(Locale.ROOT).contains("chunked")).orElse(false)) {
      body = new Http1Connection.Body(c, -1, true, keep);
    } else if (hh.firstValue("content-length").isPresent()) {
      String given = hh.firstValue("content-length").get();
      long length;
      try {
        length = Long.parseLong(given);
      } catch (NumberFormatException e) {
        throw new IOException("a malformed Content-Length: " + given);
      }
      if (length < 0) {
        throw new IOException("a negative Content-Length");
      }
      body = new Http1Connection.Body(c, length, false, keep);
    } else {
      body = new Http1Connection.Body(c, -1, false, false); // to the end of the connection
    }
    if (stream) {
      c.timeout(0); // a stream's body waits as long as it needs: its reader sets its own deadline
      return new Answer<InputStream>(request, status, hh, body);
    }
    try (body) {
      return new Answer<>(request, status, hh, body.readAllBytes());
    }
  }

  /** A pooled connection the server has not closed, or null. */
  private @Nullable Http1Connection pooled(String key) {
    ConcurrentLinkedDeque<Http1Connection> q = idle.get(key);
    if (q == null) {
      return null;
    }
    long now = System.nanoTime();
    for (Http1Connection c = q.pollFirst(); c != null; c = q.pollFirst()) {
      if (now - c.idleSince < MAX_IDLE.toNanos() && c.alive()) {
        return c;
      }
      c.discard();
    }
    return null;
  }

  private Http1Connection open(URI uri, String key, long deadline) throws IOException, InterruptedException {
    SocketChannel ch = SocketChannel.open();
    try {
      long wait = connectTimeout.toMillis();
      if (deadline != 0) {
        wait = Math.min(wait, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      }
      ch.socket().connect(new InetSocketAddress(uri.getHost(), port(uri)), (int) Math.min(Integer.MAX_VALUE, wait));
      ch.socket().setTcpNoDelay(true);
      return new Http1Connection(key, ch, this::release);
    } catch (IOException | RuntimeException e) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // never connected
      }
      if (e instanceof SocketTimeoutException) {
        throw new java.net.http.HttpConnectTimeoutException("connecting to " + uri.getHost() + ":" + port(uri) + " timed out");
      }
      throw translated(e, 0);
    }
  }

  /** Takes a connection whose answer was read whole back into the pool (closed instead once this client is). */
  private void release(Http1Connection c) {
    c.idleSince = System.nanoTime();
    ConcurrentLinkedDeque<Http1Connection> q = idle.computeIfAbsent(c.key, k -> new ConcurrentLinkedDeque<>());
    q.addFirst(c);
    if (closed) {
      close(); // a close that came meanwhile did not see it
    }
    while (q.size() > MAX_IDLE_PER_SERVER) {
      Http1Connection old = q.pollLast();
      if (old != null) {
        old.discard();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    idle.values().forEach(q -> {
      for (Http1Connection c = q.poll(); c != null; c = q.poll()) {
        c.discard();
      }
    });
  }

  /** An answer, as {@code java.net.http} gives one. */
  private record Answer<T>(HttpRequest request, int statusCode, HttpHeaders headers, T body) implements HttpResponse<T> {
    @Override
    public Optional<HttpResponse<T>> previousResponse() {
      return Optional.empty();
    }

    @Override
    public Optional<SSLSession> sslSession() {
      return Optional.empty();
    }

    @Override
    public URI uri() {
      return request.uri();
    }

    @Override
    public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }
}
