package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Sandbox ports reached from this machine through the server's forwarding (preview URLs of the local runtime). */
@ExtendWith(SharedServer.class)
class PortForwardTest {

  private static HttpResponse<byte[]> get(URI url) throws IOException, InterruptedException {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build()) {
      return http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }
  }

  @Test
  @DisplayName("a web server in a sandbox (which has no network) is reached at a loopback URL: whole bytes, the same URL each time")
  void webServerReached(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      byte[] blob = new byte[3 * 1024 * 1024 + 17];
      new Random(7).nextBytes(blob);
      s.writeBytes("/home/user/site/blob.bin", blob);
      s.writeFile("/home/user/site/hello.txt", "hello from inside\n");
      s.exec("cd /home/user/site && (nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)").orThrow();

      URI url = server.forward(s.id(), 8000);
      assertThat(url.toString()).matches("http://127\\.0\\.0\\.1:\\d+");
      assertThat(server.forward(s.id(), 8000)).isEqualTo(url);
      assertThat(server.forward(s.id(), 8001)).isNotEqualTo(url);

      await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> get(url.resolve("/hello.txt")).statusCode() == 200);
      assertThat(new String(get(url.resolve("/hello.txt")).body(), StandardCharsets.UTF_8)).isEqualTo("hello from inside\n");
      HttpResponse<byte[]> big = get(url.resolve("/blob.bin"));
      assertThat(big.statusCode()).isEqualTo(200);
      assertThat(sha256(big.body())).isEqualTo(sha256(blob));
    }
  }

  @Test
  @DisplayName("a raw TCP stream goes both ways, and closing the sending side reaches the program inside")
  void rawStreamBothWays(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      // reads until end of input, then answers with what it read, upper-cased
      s.writeFile("/home/user/upper.py", """
          import socket
          srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
          srv.bind(("127.0.0.1", 7000)); srv.listen()
          while True:
              c, _ = srv.accept(); data = b""
              while True:
                  b = c.recv(65536)
                  if not b: break
                  data += b
              c.sendall(data.upper()); c.close()
          """);
      s.exec("(nohup python3 /home/user/upper.py >/dev/null 2>&1 &)").orThrow();
      URI url = server.forward(s.id(), 7000);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> roundTrip(url, "ping").equals("PING"));
      assertThat(roundTrip(url, "a longer message, " + "x".repeat(200_000))).isEqualTo("A LONGER MESSAGE, " + "X".repeat(200_000));
    }
  }

  private static String roundTrip(URI url, String text) throws IOException {
    try (Socket socket = new Socket(url.getHost(), url.getPort())) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(text.getBytes(StandardCharsets.UTF_8));
      socket.shutdownOutput();
      try (InputStream in = socket.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }
  }

  @Test
  @DisplayName("closing a sandbox's forwarded ports (as its kill does) returns only once they refuse connections, also while no"
      + " virtual thread can run to release them")
  void closedPortsRefuseOnceClosed(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox s = e2b.create();
    URI url = server.forward(s.id(), 9002);
    try (Socket probe = new Socket(url.getHost(), url.getPort())) {
      assertThat(probe.isConnected()).isTrue();
    }
    // every carrier of the virtual-thread scheduler busy for a moment: the listener's accept loop, a
    // virtual thread, cannot run then, and the JDK releases a listener's socket only when that loop
    // has left its accept
    java.util.concurrent.CountDownLatch spinning = new java.util.concurrent.CountDownLatch(1);
    java.util.List<Thread> spinners = new java.util.ArrayList<>();
    long until = System.nanoTime() + Duration.ofMillis(300).toNanos();
    for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
      spinners.add(Thread.ofVirtual().start(() -> {
        spinning.countDown();
        while (System.nanoTime() < until) {
          Thread.onSpinWait();
        }
      }));
    }
    try {
      assertThat(spinning.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      // on this (platform) thread, while the carriers spin: what a kill does first
      server.registry().find(s.id()).orElseThrow().ports().close();
      assertThatThrownBy(() -> new Socket(url.getHost(), url.getPort()).close()).as("a connection the moment the close returned")
          .isInstanceOf(java.net.ConnectException.class);
    } finally {
      for (Thread t : spinners) {
        t.join();
      }
      s.kill();
    }
  }

  @Test
  @DisplayName("the listener ends with its sandbox; an unknown sandbox is not found; a port out of range is refused by name")
  void endsWithSandbox(E2BApi e2b, LocalServer server) throws Exception {
    URI url;
    String id;
    try (LiveSandbox s = e2b.create()) {
      id = s.id();
      url = server.forward(id, 9000);
      try (Socket probe = new Socket(url.getHost(), url.getPort())) {
        assertThat(probe.isConnected()).isTrue();
      }
      assertThatThrownBy(() -> server.forward(id, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
    }
    assertThatThrownBy(() -> new Socket(url.getHost(), url.getPort()).close()).isInstanceOf(java.net.ConnectException.class);
    assertThatThrownBy(() -> server.forward(id, 9000)).isInstanceOf(SandboxNotFoundException.class);
  }

  @Test
  @DisplayName("over HTTP: POST /local/sandboxes/{id}/ports/{port} gives the same URL; the key is required; 404 and 400 as expected")
  void overHttp(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      java.util.function.BiFunction<String, String, HttpResponse<String>> post = (path, key) -> {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.apiUrl().resolve(path)).POST(HttpRequest.BodyPublishers.noBody());
        if (key != null) {
          b.header("X-API-KEY", key);
        }
        try {
          return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException | InterruptedException e) {
          throw new IllegalStateException(e);
        }
      };
      HttpResponse<String> ok = post.apply("/local/sandboxes/" + s.id() + "/ports/8080", server.apiKey());
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(io.sandboxes.e2b.internal.Json.parse(ok.body().getBytes(StandardCharsets.UTF_8)).path("url").asText()).isEqualTo(server.forward(s.id(), 8080).toString());
      assertThat(post.apply("/local/sandboxes/" + s.id() + "/ports/8080", null).statusCode()).isEqualTo(401);
      assertThat(post.apply("/local/sandboxes/nosuchsandbox/ports/8080", server.apiKey()).statusCode()).isEqualTo(404);
      assertThat(post.apply("/local/sandboxes/" + s.id() + "/ports/x", server.apiKey()).statusCode()).isEqualTo(400);
      assertThat(post.apply("/local/sandboxes/" + s.id() + "/ports/70000", server.apiKey()).statusCode()).isEqualTo(400);
    }
  }

  /**
   * A static TCP echo server in C (no libc needed in the image): one process per connection,
   * echoing as it reads, shutting its sending side at the client's end of stream.
   */
  private static final String ECHO_SERVER = """
      #include <netinet/in.h>
      #include <arpa/inet.h>
      #include <signal.h>
      #include <stdlib.h>
      #include <sys/socket.h>
      #include <unistd.h>
      int main(int argc, char **argv) {
        signal(SIGCHLD, SIG_IGN);
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 128) != 0) return 1;
        for (;;) {
          int c = accept(s, 0, 0);
          if (c < 0) continue;
          if (fork() == 0) {
            static char buf[65536];
            ssize_t n;
            while ((n = read(c, buf, sizeof buf)) > 0)
              for (ssize_t off = 0; off < n;) {
                ssize_t w = write(c, buf + off, n - off);
                if (w <= 0) _exit(1);
                off += w;
              }
            shutdown(c, SHUT_WR);
            _exit(0);
          }
          close(c);
        }
      }
      """;

  private static byte[] echoServerBinary;

  /** The echo server, compiled static with this machine's gcc (which building the daemon needs anyway). */
  private static synchronized byte[] echoServer() throws Exception {
    if (echoServerBinary == null) {
      java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("sandboxes-fwd-echo-");
      java.nio.file.Path src = dir.resolve("echo.c");
      java.nio.file.Path bin = dir.resolve("echo");
      java.nio.file.Files.writeString(src, ECHO_SERVER);
      Process gcc = new ProcessBuilder("gcc", "-static", "-O2", "-o", bin.toString(), src.toString()).redirectErrorStream(true).start();
      String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(gcc.waitFor()).as("gcc: %s", out).isZero();
      echoServerBinary = java.nio.file.Files.readAllBytes(bin);
      java.nio.file.Files.delete(bin);
      java.nio.file.Files.delete(src);
      java.nio.file.Files.delete(dir);
    }
    return echoServerBinary;
  }

  /** Puts the echo server into a sandbox and starts it on a port, as the sandbox's user. */
  private static void startEcho(LiveSandbox s, int port) throws Exception {
    s.writeBytes("/home/user/echo", echoServer());
    s.exec("chmod 755 /home/user/echo && (nohup /home/user/echo " + port + " >/dev/null 2>&1 &)").orThrow();
  }

  /** Sends data, half-closes, and reads everything back (the writing on a thread of its own, so neither side waits on the other). */
  private static byte[] exchange(URI url, byte[] data) throws Exception {
    try (Socket socket = new Socket(url.getHost(), url.getPort())) {
      socket.setSoTimeout(30_000);
      java.util.concurrent.CompletableFuture<Void> sent = java.util.concurrent.CompletableFuture.runAsync(() -> {
        try {
          OutputStream out = socket.getOutputStream();
          for (int off = 0; off < data.length; off += 64 * 1024) {
            out.write(data, off, Math.min(64 * 1024, data.length - off));
          }
          socket.shutdownOutput();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
      byte[] back = socket.getInputStream().readAllBytes();
      sent.get(30, java.util.concurrent.TimeUnit.SECONDS);
      return back;
    }
  }

  @Test
  @DisplayName("a template without python3 (or any relay program) still gets working forwarding: the daemon makes the connection")
  void templateWithoutPython(E2BApi e2b, LocalServer server) throws Exception {
    String name = "fwd-nopython-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    io.sandboxes.e2b.SnapshotInfo snap;
    try (LiveSandbox source = e2b.create()) {
      source.writeBytes("/home/user/echo", echoServer());
      source.exec("chmod 755 /home/user/echo && rm -f /usr/bin/python3* /usr/local/bin/python3* && ! command -v python3",
          io.sandboxes.ExecOptions.defaults().withUser("root")).orThrow();
      snap = e2b.createSnapshot(source.id(), name);
    }
    try (LiveSandbox s = e2b.create(io.sandboxes.SandboxSpec.of(snap.snapshotId()))) {
      assertThat(s.exec("command -v python3 python || echo none").stdout()).isEqualTo("none\n");
      s.exec("(nohup /home/user/echo 7100 >/dev/null 2>&1 &)").orThrow();
      URI url = server.forward(s.id(), 7100);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> new String(exchange(url, "ping".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8).equals("ping"));
      byte[] blob = new byte[2 * 1024 * 1024 + 5];
      new Random(11).nextBytes(blob);
      assertThat(sha256(exchange(url, blob))).isEqualTo(sha256(blob));
    } finally {
      e2b.deleteTemplate(snap.snapshotId());
    }
  }

  @Test
  @DisplayName("a connection to a port nothing listens on is closed promptly, and the listener goes on serving")
  void refusedPortClosesPromptly(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      URI url = server.forward(s.id(), 7200);
      for (int i = 0; i < 3; i++) {
        try (Socket socket = new Socket(url.getHost(), url.getPort())) {
          socket.setSoTimeout(20_000);
          long t0 = System.nanoTime();
          int first;
          try {
            first = socket.getInputStream().read();
          } catch (java.net.SocketException reset) {
            first = -1;
          }
          long ms = (System.nanoTime() - t0) / 1_000_000;
          assertThat(first).isEqualTo(-1);
          // a hang waits out the 20 s read timeout; a loaded machine takes a few seconds at most
          assertThat(ms).as("closed after %d ms", ms).isLessThan(10_000);
        }
      }
      startEcho(s, 7200);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> new String(exchange(url, "late".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8).equals("late"));
    }
  }

  @Test
  @DisplayName("20 connections at once each get their own bytes back, intact")
  void manyConcurrentConnections(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      startEcho(s, 7300);
      URI url = server.forward(s.id(), 7300);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> new String(exchange(url, "up".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8).equals("up"));
      try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
        java.util.List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
          int seed = i;
          results.add(pool.submit(() -> {
            byte[] mine = new byte[300 * 1024 + seed];
            new Random(seed).nextBytes(mine);
            return java.util.Arrays.equals(exchange(url, mine), mine);
          }));
        }
        for (java.util.concurrent.Future<Boolean> r : results) {
          assertThat(r.get(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
      }
    }
  }

  @Test
  @DisplayName("a large transfer both ways at once (32 MiB up while it echoes back) completes: flow control, no deadlock")
  void largeBothWays(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      startEcho(s, 7400);
      URI url = server.forward(s.id(), 7400);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> new String(exchange(url, "up".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8).equals("up"));
      byte[] blob = new byte[32 * 1024 * 1024];
      new Random(3).nextBytes(blob);
      assertThat(sha256(exchange(url, blob))).isEqualTo(sha256(blob));
    }
  }

  private static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }
}
