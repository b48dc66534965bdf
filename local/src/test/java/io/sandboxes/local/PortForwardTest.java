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

  private static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }
}
