package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxException;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The plain-http transport ({@link Http1}) through {@link Http}, against a peer on a real loopback
 * socket that answers as each test scripts it, byte for byte: what a server may do that the local
 * server never does (close a kept-alive connection, answer late or never, end a body with the
 * connection) is what this transport must survive.
 */
class Http1Test {
  /** One request as the peer read it. */
  record Seen(int connection, String line, Map<String, String> headers, byte[] body) {}

  /** What the peer does with a request: writes an answer (or not); returns false to close the connection. */
  @FunctionalInterface
  interface Script {
    boolean answer(Seen request, int onConnection, OutputStream out) throws Exception;
  }

  /** A loopback peer speaking HTTP/1.1 on raw sockets, one virtual thread per connection. */
  static final class Peer implements AutoCloseable {
    final ServerSocket socket;
    final AtomicInteger accepted = new AtomicInteger();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final List<Socket> open = new CopyOnWriteArrayList<>();
    final CountDownLatch closedOne = new CountDownLatch(1);
    /** Released when the test is over: a script that stays silent waits for it. */
    private final CountDownLatch over = new CountDownLatch(1);
    private final Script script;

    Peer(Script script) throws IOException {
      this.script = script;
      this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread.ofVirtual().start(this::accept);
    }

    URI uri(String path) {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          open.add(s);
          int n = accepted.incrementAndGet();
          Thread.ofVirtual().start(() -> serve(s, n));
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket s, int connection) {
      try (s) {
        InputStream in = new BufferedInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        for (int k = 0; ; k++) {
          String line = line(in);
          if (line == null) {
            return;
          }
          Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
          for (String h = line(in); h != null && !h.isEmpty(); h = line(in)) {
            headers.put(h.substring(0, h.indexOf(':')).strip(), h.substring(h.indexOf(':') + 1).strip());
          }
          byte[] body;
          if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            for (int size = Integer.parseInt(line(in), 16); size > 0; size = Integer.parseInt(line(in), 16)) {
              b.write(in.readNBytes(size));
              line(in);
            }
            line(in);
            body = b.toByteArray();
          } else {
            body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
          }
          Seen r = new Seen(connection, line, headers, body);
          seen.add(r);
          if (!script.answer(r, k, out)) {
            return;
          }
          out.flush();
        }
      } catch (Exception e) {
        // the client went away
      } finally {
        closedOne.countDown();
      }
    }

    private static String line(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          return null;
        }
        if (c != '\r') {
          b.write(c);
        }
      }
      return b.toString(StandardCharsets.ISO_8859_1);
    }

    /** Keeps a connection's script silent until the test is over. */
    void silent() throws InterruptedException {
      over.await();
    }

    @Override
    public void close() throws IOException {
      over.countDown();
      socket.close();
      for (Socket s : open) {
        s.close();
      }
    }
  }

  private static void write(OutputStream out, String s) throws IOException {
    out.write(s.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Answers with the request's body, its length given. */
  private static boolean echo(Seen r, int k, OutputStream out) throws IOException {
    write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + r.body().length + "\r\n\r\n");
    out.write(r.body());
    return true;
  }

  private Peer peer;
  private final Http http = new Http(Duration.ofSeconds(10));

  @AfterEach
  void close() throws IOException {
    http.close();
    if (peer != null) {
      peer.close();
    }
  }

  private HttpRequest post(String path, String body) {
    return http.request(peer.uri(path)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }

  @Test
  void requestsShareOneKeptAliveConnection() throws Exception {
    peer = new Peer(Http1Test::echo);
    for (int i = 0; i < 30; i++) {
      HttpResponse<byte[]> r = http.send(post("/echo?i=" + i, "body " + i), "echo");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("body " + i);
      assertThat(r.headers().firstValue("content-type")).as("headers are found whatever their case").hasValue("text/plain");
    }
    HttpResponse<byte[]> get = http.send(http.request(peer.uri("/g")).GET().build(), "get");
    assertThat(get.body()).isEmpty();
    assertThat(peer.accepted.get()).as("connections opened for 31 requests").isEqualTo(1);
    Seen first = peer.seen.get(0);
    assertThat(first.line()).isEqualTo("POST /echo?i=0 HTTP/1.1");
    assertThat(first.headers()).containsEntry("Host", "127.0.0.1:" + peer.socket.getLocalPort())
        .containsEntry("Content-Length", "6").containsKey("User-Agent");
    assertThat(peer.seen.get(30).headers()).as("a GET without a body says no length").doesNotContainKey("Content-Length");
  }

  @Test
  void chunkedStreamReadToItsLastMessageLeavesTheConnectionForTheNext() throws Exception {
    peer = new Peer((r, k, out) -> {
      if (r.line().startsWith("POST /stream")) {
        write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        write(out, "5\r\nfirst\r\n");
        out.flush();
        // the last message and the body's end in one write, as a server ends a stream
        write(out, "4\r\nlast\r\n0\r\n\r\n");
        return true;
      }
      if (r.line().startsWith("POST /cut")) {
        write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\npart-1\r\n");
        out.flush();
        return true; // and the rest never comes
      }
      return echo(r, k, out);
    });
    for (int i = 0; i < 3; i++) {
      HttpResponse<InputStream> r = http.stream(post("/stream", ""), "stream");
      try (InputStream in = r.body()) {
        // a Connect reader stops after the end message, the body's last chunk unread
        assertThat(new String(in.readNBytes(9), StandardCharsets.UTF_8)).isEqualTo("firstlast");
      }
    }
    assertThat(new String(http.send(post("/after", "x"), "after").body(), StandardCharsets.UTF_8)).isEqualTo("x");
    assertThat(peer.accepted.get()).as("streams closed at their last message give their connection back").isEqualTo(1);

    HttpResponse<InputStream> cut = http.stream(post("/cut", ""), "cut");
    try (InputStream in = cut.body()) {
      assertThat(new String(in.readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("part-1");
    }
    assertThat(new String(http.send(post("/after", "y"), "after").body(), StandardCharsets.UTF_8)).isEqualTo("y");
    assertThat(peer.accepted.get()).as("a stream closed in the middle of its body takes its connection with it").isEqualTo(2);
  }

  /** A Connect stream's body as one chunk: a message and the end-of-stream envelope, without the chunk that ends the body. */
  private static void connectContent(OutputStream out) throws IOException {
    ByteArrayOutputStream content = new ByteArrayOutputStream();
    content.write(Connect.envelope(0, "{\"n\":1}".getBytes(StandardCharsets.UTF_8)));
    content.write(Connect.envelope(Connect.FLAG_END_STREAM, "{}".getBytes(StandardCharsets.UTF_8)));
    write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n");
    write(out, Integer.toHexString(content.size()) + "\r\n");
    content.writeTo(out);
    out.flush();
  }

  private ConnectStream connect(String path) {
    HttpResponse<InputStream> r = http.stream(post(path, ""), "connect");
    return new ConnectStream(r.body(), "connect", (code, message) -> new SandboxException(code + ": " + message));
  }

  @Test
  void aConnectStreamReadToItsEndKeepsItsConnectionWhileTheBodysLastChunkIsStillToCome() throws Exception {
    CountDownLatch streamClosed = new CountDownLatch(1);
    peer = new Peer((r, k, out) -> {
      if (r.line().startsWith("POST /late")) {
        connectContent(out);
        // the chunk that ends the body comes in a write of its own, after the client closed the stream
        assertThat(streamClosed.await(10, TimeUnit.SECONDS)).isTrue();
        write(out, "\r\n0\r\n\r\n");
        return true;
      }
      if (r.line().startsWith("POST /never")) {
        connectContent(out);
        peer.silent(); // the body's end never comes
        return false;
      }
      if (r.line().startsWith("POST /other")) {
        connectContent(out);
        write(out, "\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n"); // more than the body's end: not a connection to reuse
        return true;
      }
      return echo(r, k, out);
    });
    try (ConnectStream stream = connect("/late")) {
      assertThat(stream.next()).isNotNull();
      assertThat(stream.next()).as("the end-of-stream envelope").isNull();
    }
    streamClosed.countDown();
    assertThat(new String(http.send(post("/after", "x"), "after").body(), StandardCharsets.UTF_8)).isEqualTo("x");
    assertThat(peer.accepted.get()).as("the next call reads the body's end the stream owed, and reuses its connection").isEqualTo(1);
    assertThat(peer.seen).extracting(Seen::connection).containsExactly(1, 1);

    try (ConnectStream stream = connect("/never")) {
      assertThat(stream.next()).isNotNull();
      assertThat(stream.next()).isNull();
    }
    long before = System.nanoTime();
    assertThat(new String(http.send(post("/after", "y"), "after").body(), StandardCharsets.UTF_8)).isEqualTo("y");
    assertThat(Duration.ofNanos(System.nanoTime() - before)).as("the wait for a body's end that never comes is bounded")
        .isLessThan(Duration.ofSeconds(2));
    assertThat(peer.accepted.get()).as("a connection whose body never ended is not reused").isEqualTo(2);

    try (ConnectStream stream = connect("/other")) {
      assertThat(stream.next()).isNotNull();
      assertThat(stream.next()).isNull();
    }
    assertThat(new String(http.send(post("/after", "z"), "after").body(), StandardCharsets.UTF_8)).isEqualTo("z");
    assertThat(peer.accepted.get()).as("a connection that carried more than the body's end is not reused").isEqualTo(3);
  }

  @Test
  void aStreamClosedFromAnotherThreadWakesItsReader() throws Exception {
    CountDownLatch answered = new CountDownLatch(1);
    peer = new Peer((r, k, out) -> {
      write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      out.flush();
      answered.countDown();
      peer.silent(); // the reader waits until the stream is closed
      return false;
    });
    HttpResponse<InputStream> r = http.stream(post("/quiet", ""), "quiet");
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread reader = Thread.ofVirtual().start(() -> {
      try {
        r.body().read();
      } catch (IOException e) {
        failure.set(e);
      }
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> reader.getState() == Thread.State.WAITING
        || reader.getState() == Thread.State.TIMED_WAITING || reader.getState() == Thread.State.BLOCKED);
    long t0 = System.nanoTime();
    r.body().close();
    assertThat(reader.join(Duration.ofSeconds(2))).as("the blocked reader returned").isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
    assertThat(failure.get()).as("the read ended with an error, not as if the body had ended").isInstanceOf(IOException.class);
  }

  @Test
  void aConnectionTheServerClosedWhileIdleIsNotUsed() throws Exception {
    peer = new Peer((r, k, out) -> {
      echo(r, k, out);
      out.flush();
      return false; // closes after each answer, without saying so
    });
    assertThat(http.send(post("/one", "1"), "one").body()).asString().isEqualTo("1");
    assertThat(peer.closedOne.await(5, TimeUnit.SECONDS)).isTrue();
    // a POST is never sent again on a new connection, so it only succeeds when the closed one is not taken
    assertThat(http.send(post("/two", "2"), "two").body()).asString().isEqualTo("2");
    assertThat(peer.accepted.get()).isEqualTo(2);
    assertThat(peer.seen).hasSize(2);
  }

  @Test
  void aConnectionClosedWithoutAnAnswerIsRetriedOnlyForIdempotentRequests() throws Exception {
    peer = new Peer((r, k, out) -> {
      if (k == 1) {
        return false; // the second request on a connection: read, then the connection closed, no answer
      }
      return echo(r, k, out);
    });
    assertThat(http.send(post("/first", "a"), "first").body()).asString().isEqualTo("a");
    HttpResponse<byte[]> get = http.send(http.request(peer.uri("/again")).GET().build(), "get");
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(peer.seen.stream().map(Seen::line).toList()).as("the GET went twice, the second on a new connection")
        .containsExactly("POST /first HTTP/1.1", "GET /again HTTP/1.1", "GET /again HTTP/1.1");
    assertThat(peer.accepted.get()).isEqualTo(2);

    // the connection of the retried GET is kept; its next request (a POST) is read and not answered
    assertThatThrownBy(() -> http.send(post("/once", "b"), "once")).isInstanceOf(SandboxException.class)
        .hasMessageContaining("once").hasMessageContaining("closed the connection without answering");
    assertThat(peer.seen.stream().filter(s -> s.line().startsWith("POST /once")).count()).as("the POST was not sent twice")
        .isEqualTo(1);
  }

  @Test
  void aServerThatDoesNotAnswerTimesOut() throws Exception {
    peer = new Peer((r, k, out) -> {
      peer.silent();
      return false;
    });
    HttpRequest slow = http.request(peer.uri("/slow")).timeout(Duration.ofMillis(300)).POST(HttpRequest.BodyPublishers.ofString("x"))
        .build();
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> http.send(slow, "slow call")).isInstanceOf(SandboxException.class)
        .hasMessageContaining("slow call: no answer from 127.0.0.1 within PT0.3S");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofMillis(250), Duration.ofSeconds(2));
  }

  @Test
  void anInterruptEndsAWaitingCall() throws Exception {
    CountDownLatch arrived = new CountDownLatch(1);
    peer = new Peer((r, k, out) -> {
      arrived.countDown();
      peer.silent();
      return false;
    });
    try (Http untimed = new Http(Duration.ZERO)) {
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
      // a platform thread: its blocking socket read must end on an interrupt too
      Thread caller = Thread.ofPlatform().start(() -> {
        try {
          untimed.send(untimed.request(peer.uri("/wait")).POST(HttpRequest.BodyPublishers.ofString("x")).build(), "waiting call");
        } catch (RuntimeException e) {
          failure.set(e);
        }
        stillInterrupted.set(Thread.currentThread().isInterrupted());
      });
      assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
      long t0 = System.nanoTime();
      caller.interrupt();
      assertThat(caller.join(Duration.ofSeconds(2))).as("the interrupted call returned").isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
      assertThat(failure.get()).isInstanceOf(SandboxException.class).hasMessage("waiting call: interrupted");
      assertThat(stillInterrupted.get()).as("the caller's interrupt is kept").isTrue();
    }
  }

  @Test
  void callsFromAForkJoinPoolOfOneWorkerDoNotWaitForEachOther() throws Exception {
    peer = new Peer((r, k, out) -> {
      Thread.sleep(1_000); // the server takes a second over each answer
      return echo(r, k, out);
    });
    java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(1);
    try {
      long t0 = System.nanoTime();
      List<java.util.concurrent.Future<HttpResponse<byte[]>>> calls = List.of(
          pool.submit(() -> http.send(post("/a", "a"), "a")), pool.submit(() -> http.send(post("/b", "b"), "b")));
      for (java.util.concurrent.Future<HttpResponse<byte[]>> c : calls) {
        assertThat(c.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      }
      // one after the other, as a worker blocked in a read without telling its pool makes them, takes 2 s
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(1_800));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void bodiesEndedByLengthByChunksAndByTheConnection() throws Exception {
    peer = new Peer((r, k, out) -> {
      switch (r.line().split(" ")[1]) {
        case "/empty" -> write(out, "HTTP/1.1 204 No Content\r\n\r\n");
        case "/continue" -> write(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        case "/chunks" -> write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n");
        case "/rest" -> {
          write(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end");
          return false;
        }
        default -> write(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope");
      }
      return true;
    });
    HttpResponse<byte[]> empty = http.send(post("/empty", ""), "empty");
    assertThat(empty.statusCode()).isEqualTo(204);
    assertThat(empty.body()).isEmpty();
    assertThat(http.send(post("/continue", ""), "continue").body()).asString().isEqualTo("ok");
    assertThat(http.send(post("/chunks", ""), "chunks").body()).asString().isEqualTo("abcde");
    HttpResponse<byte[]> missing = http.send(post("/missing", ""), "missing");
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).asString().isEqualTo("nope");
    assertThat(peer.accepted.get()).as("one connection so far").isEqualTo(1);
    assertThat(http.send(post("/rest", ""), "rest").body()).asString().isEqualTo("to the end");
    assertThat(http.send(post("/chunks", ""), "chunks again").body()).asString().isEqualTo("abcde");
    assertThat(peer.accepted.get()).as("a body ended by the connection takes the connection with it").isEqualTo(2);
  }

  @Test
  void aBodyOfUnknownLengthGoesThroughJavaNetHttp() throws Exception {
    peer = new Peer(Http1Test::echo);
    HttpRequest streamed = http.request(peer.uri("/upload"))
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream("streamed".getBytes(StandardCharsets.UTF_8))))
        .build();
    assertThat(http.send(streamed, "upload").body()).asString().isEqualTo("streamed");
    assertThat(peer.seen.get(0).headers().get("Transfer-Encoding")).as("sent in chunks, which only java.net.http does")
        .isEqualToIgnoringCase("chunked");
    assertThat(Http1.sendable(http.request(URI.create("https://example.test/x")).GET().build())).as("https").isNull();
    assertThat(Http1.sendable(http.request(peer.uri("/x")).expectContinue(true).POST(HttpRequest.BodyPublishers.ofString("x"))
        .build())).as("Expect: 100-continue").isNull();
    assertThat(Http1.sendable(http.request(peer.uri("/x")).POST(HttpRequest.BodyPublishers.ofByteArray(new byte[Http1.MAX_BODY + 1]))
        .build())).as("a body over 1 MiB").isNull();
    assertThat(Http1.sendable(http.request(peer.uri("/x")).POST(HttpRequest.BodyPublishers.ofString("abc")).build()))
        .asString().isEqualTo("abc");
  }
}
