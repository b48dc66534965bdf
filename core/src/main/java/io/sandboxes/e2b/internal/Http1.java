package io.sandboxes.e2b.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.Socket;
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
import java.util.concurrent.atomic.AtomicBoolean;
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
  private static final int MAX_LINE = 16 * 1024;
  private static final byte[] NO_BYTES = new byte[0];
  private static final java.util.Set<String> IDEMPOTENT = java.util.Set.of("GET", "HEAD", "PUT", "DELETE", "OPTIONS");

  private final Duration connectTimeout;
  private final ConcurrentHashMap<String, ConcurrentLinkedDeque<Conn>> idle = new ConcurrentHashMap<>();
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
      Conn c = attempt == 0 ? pooled(key) : null;
      boolean reused = c != null;
      if (c == null) {
        c = open(request.uri(), key, deadline);
      }
      try {
        c.out.write(head);
        c.out.write(body);
        c.out.flush();
        return answer(request, c, deadline, stream);
      } catch (Stale e) {
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

  private HttpResponse<?> answer(HttpRequest request, Conn c, long deadline, boolean stream) throws IOException {
    int status;
    String reason;
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
      reason = line.substring(Math.min(13, line.length()));
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
    Body body;
    if (request.method().equals("HEAD") || status == 204 || status == 304) {
      body = new Body(c, 0, false, keep);
    } else if (hh.firstValue("transfer-encoding").map(v -> v.toLowerCase(Locale.ROOT).contains("chunked")).orElse(false)) {
      body = new Body(c, -1, true, keep);
    } else if (hh.firstValue("content-length").isPresent()) {
      long length;
      try {
        length = Long.parseLong(hh.firstValue("content-length").get());
      } catch (NumberFormatException e) {
        throw new IOException("a malformed Content-Length: " + hh.firstValue("content-length").get());
      }
      if (length < 0) {
        throw new IOException("a negative Content-Length");
      }
      body = new Body(c, length, false, keep);
    } else {
      body = new Body(c, -1, false, false); // to the end of the connection
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
  private @Nullable Conn pooled(String key) {
    ConcurrentLinkedDeque<Conn> q = idle.get(key);
    if (q == null) {
      return null;
    }
    long now = System.nanoTime();
    for (Conn c = q.pollFirst(); c != null; c = q.pollFirst()) {
      if (now - c.idleSince < MAX_IDLE.toNanos() && c.alive()) {
        return c;
      }
      c.discard();
    }
    return null;
  }

  private Conn open(URI uri, String key, long deadline) throws IOException, InterruptedException {
    SocketChannel ch = SocketChannel.open();
    try {
      long wait = connectTimeout.toMillis();
      if (deadline != 0) {
        wait = Math.min(wait, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      }
      ch.socket().connect(new InetSocketAddress(uri.getHost(), port(uri)), (int) Math.min(Integer.MAX_VALUE, wait));
      ch.socket().setTcpNoDelay(true);
      return new Conn(this, key, ch);
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

  private void release(Conn c) {
    if (closed) {
      c.discard();
      return;
    }
    c.idleSince = System.nanoTime();
    ConcurrentLinkedDeque<Conn> q = idle.computeIfAbsent(c.key, k -> new ConcurrentLinkedDeque<>());
    q.addFirst(c);
    if (closed) {
      close();
    }
    while (q.size() > MAX_IDLE_PER_SERVER) {
      Conn old = q.pollLast();
      if (old != null) {
        old.discard();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    idle.values().forEach(q -> {
      for (Conn c = q.poll(); c != null; c = q.poll()) {
        c.discard();
      }
    });
  }

  /** The server closed a connection taken from the pool before anything of the answer came. */
  private static final class Stale extends IOException {
    private static final long serialVersionUID = 1L;

    Stale(IOException cause) {
      super(cause);
    }
  }

  /** One connection: its socket, and the bytes read from it not yet taken. */
  private static final class Conn {
    final Http1 owner;
    final String key;
    final SocketChannel channel;
    final Socket socket;
    final InputStream in;
    final OutputStream out;
    final byte[] buf = new byte[16 * 1024];
    int pos;
    int lim;
    long idleSince;
    long deadline;

    Conn(Http1 owner, String key, SocketChannel channel) throws IOException {
      this.owner = owner;
      this.key = key;
      this.channel = channel;
      this.socket = channel.socket();
      this.in = socket.getInputStream();
      this.out = new java.io.BufferedOutputStream(socket.getOutputStream(), 8 * 1024);
    }

    /** Until when reads wait (0: for ever). */
    void timeout(long deadline) {
      this.deadline = deadline;
    }

    /** Reads more into the buffer. @return false at the end of the connection */
    boolean fill() throws IOException {
      int wait = 0;
      if (deadline != 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new SocketTimeoutException("no answer in time");
        }
        wait = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left)));
      }
      socket.setSoTimeout(wait);
      pos = 0;
      lim = 0;
      int n = readBlocking();
      if (n <= 0) {
        return false;
      }
      lim = n;
      return true;
    }

    /**
     * Reads from the socket, waiting as long as it takes. A worker of a {@link
     * java.util.concurrent.ForkJoinPool} (the common pool runs {@code supplyAsync} and parallel
     * streams) tells its pool it blocks, so the pool can go on with its other tasks on another
     * thread, as it does for the JDK's own blocking waits: with a pool of one worker on a two-core
     * machine, two calls made from it would otherwise run one after the other.
     */
    private int readBlocking() throws IOException {
      if (!(Thread.currentThread() instanceof java.util.concurrent.ForkJoinWorkerThread)) {
        return in.read(buf);
      }
      final class Read implements java.util.concurrent.ForkJoinPool.ManagedBlocker {
        boolean done;
        int n;
        @Nullable IOException failed;

        @Override
        public boolean block() {
          try {
            n = in.read(buf);
          } catch (IOException e) {
            failed = e;
          }
          done = true;
          return true;
        }

        @Override
        public boolean isReleasable() {
          return done;
        }
      }
      Read r = new Read();
      try {
        java.util.concurrent.ForkJoinPool.managedBlock(r);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while waiting for the answer");
      }
      if (r.failed != null) {
        throw r.failed;
      }
      return r.n;
    }

    /**
     * A line without its CRLF.
     *
     * @param first whether it is the answer's first: an end or a reset before any of it is {@link Stale}
     */
    String line(boolean first) throws IOException {
      StringBuilder s = new StringBuilder(64);
      while (true) {
        if (pos == lim) {
          boolean more;
          try {
            more = fill();
          } catch (java.net.SocketException e) {
            if (first && s.isEmpty() && !Thread.currentThread().isInterrupted()) {
              throw new Stale(e);
            }
            throw e;
          }
          if (!more) {
            EOFException end = new EOFException("the server closed the connection");
            if (first && s.isEmpty()) {
              throw new Stale(end);
            }
            throw end;
          }
        }
        byte b = buf[pos++];
        if (b == '\n') {
          int len = s.length();
          if (len > 0 && s.charAt(len - 1) == '\r') {
            s.setLength(len - 1);
          }
          return s.toString();
        }
        if (s.length() >= MAX_LINE) {
          throw new IOException("a line of the answer's head is longer than " + MAX_LINE + " bytes");
        }
        s.append((char) (b & 0xff));
      }
    }

    /** Whether the server has not closed it (nor sent anything unasked) while it was idle. */
    boolean alive() {
      if (pos != lim) {
        return false;
      }
      try {
        channel.configureBlocking(false);
        int n;
        try {
          n = channel.read(ByteBuffer.allocate(1));
        } finally {
          channel.configureBlocking(true);
        }
        return n == 0;
      } catch (IOException e) {
        return false;
      }
    }

    void discard() {
      try {
        channel.close();
      } catch (IOException ignored) {
        // gone either way
      }
    }
  }

  /**
   * An answer's body: a fixed length, chunks, or the rest of the connection. Read to its end, its
   * connection goes back to the pool; closed before, the connection is closed (from any thread:
   * a read blocked on it then fails).
   */
  private static final class Body extends InputStream {
    private final Conn c;
    private final boolean chunked;
    private final boolean keep;
    /** Bytes left of the body (fixed) or of the current chunk; -1 for a chunked body before its first chunk. */
    private long left;
    private boolean ended;
    private final AtomicBoolean settled = new AtomicBoolean();
    /** Held while this body is read: a close from another thread meanwhile closes the connection, reading nothing. */
    private final java.util.concurrent.locks.ReentrantLock reading = new java.util.concurrent.locks.ReentrantLock();

    Body(Conn c, long length, boolean chunked, boolean keep) throws IOException {
      this.c = c;
      this.chunked = chunked;
      this.keep = keep;
      this.left = chunked ? 0 : length;
      if (!chunked && length == 0) {
        end();
      }
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      java.util.Objects.checkFromIndexSize(off, len, b.length);
      reading.lock();
      try {
        return readLocked(b, off, len);
      } finally {
        reading.unlock();
      }
    }

    private int readLocked(byte[] b, int off, int len) throws IOException {
      if (ended) {
        return -1;
      }
      if (settled.get()) {
        throw new IOException("closed");
      }
      if (len == 0) {
        return 0;
      }
      if (chunked && left == 0 && !nextChunk()) {
        return -1;
      }
      if (c.pos == c.lim && !c.fill()) {
        if (!chunked && left < 0) {
          end();
          return -1;
        }
        throw new EOFException("the server closed the connection in the middle of the answer's body");
      }
      int n = c.lim - c.pos;
      n = Math.min(n, len);
      if (left >= 0) {
        n = (int) Math.min(n, left);
      }
      System.arraycopy(c.buf, c.pos, b, off, n);
      c.pos += n;
      if (left > 0) {
        left -= n;
        if (left == 0 && !chunked) {
          end();
        }
      }
      return n;
    }

    /** Reads the next chunk's size. @return false at the last chunk (trailers read, the body ended) */
    private boolean nextChunk() throws IOException {
      if (left == 0 && startedChunks) {
        String crlf = c.line(false);
        if (!crlf.isEmpty()) {
          throw new IOException("a chunk not followed by CRLF");
        }
      }
      startedChunks = true;
      String size = c.line(false);
      int semi = size.indexOf(';');
      long n;
      try {
        n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).strip(), 16);
      } catch (NumberFormatException e) {
        throw new IOException("a malformed chunk size: " + Json.abbreviate(size));
      }
      if (n < 0) {
        throw new IOException("a negative chunk size");
      }
      if (n == 0) {
        for (String trailer = c.line(false); !trailer.isEmpty(); trailer = c.line(false)) {
          // trailers carry nothing this client reads
        }
        end();
        return false;
      }
      left = n;
      return true;
    }

    private boolean startedChunks;

    @Override
    public int available() {
      return ended || settled.get() ? 0 : (int) Math.min(c.lim - c.pos, left < 0 ? Integer.MAX_VALUE : left);
    }

    private void end() {
      ended = true;
      if (settled.compareAndSet(false, true)) {
        if (keep && c.pos == c.lim) {
          c.owner.release(c);
        } else {
          c.discard();
        }
      }
    }

    /** The end of a chunked body as servers send it: the last chunk's CRLF, a chunk of size 0, no trailers. */
    private static final byte[] LAST_CHUNK = "\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

    /**
     * Closes the body. A reader that stops at a chunk's end (a Connect stream stops after its end
     * message) has left only the body's last chunk unread: when that has arrived, it is taken and
     * the connection goes back to the pool; otherwise, and while another thread reads, the
     * connection is closed.
     */
    @Override
    public void close() {
      if (settled.get()) {
        return;
      }
      if (chunked && left == 0 && startedChunks && reading.tryLock()) {
        try {
          if (!settled.get() && lastChunkArrived()) {
            c.pos += LAST_CHUNK.length;
            end();
            return;
          }
        } finally {
          reading.unlock();
        }
      }
      if (settled.compareAndSet(false, true)) {
        c.discard();
      }
    }

    /** Whether the buffer holds, or the connection has waiting, exactly the body's last chunk. */
    private boolean lastChunkArrived() {
      try {
        if (c.lim - c.pos < LAST_CHUNK.length) {
          System.arraycopy(c.buf, c.pos, c.buf, 0, c.lim - c.pos);
          c.lim -= c.pos;
          c.pos = 0;
          c.channel.configureBlocking(false);
          try {
            int n = c.channel.read(ByteBuffer.wrap(c.buf, c.lim, c.buf.length - c.lim));
            if (n > 0) {
              c.lim += n;
            }
          } finally {
            c.channel.configureBlocking(true);
          }
        }
        return c.lim - c.pos == LAST_CHUNK.length
            && java.util.Arrays.equals(c.buf, c.pos, c.lim, LAST_CHUNK, 0, LAST_CHUNK.length);
      } catch (IOException | RuntimeException e) {
        return false;
      }
    }
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
