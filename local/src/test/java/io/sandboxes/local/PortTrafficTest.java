package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * What a sandbox's port traffic costs the server and who may send it: requests routed by
 * {@code E2b-Sandbox-Port} are relayed over the daemon with no listener on the host; a sandbox
 * created with {@code allowPublicTraffic: false} takes them only with its traffic token, as E2B's
 * proxy does (403 otherwise); the listeners preview URLs need are capped and close when idle.
 *
 * <p>Isolated, one test at a time: the JVM's listening sockets are counted.
 */
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
@ExtendWith(SharedServer.class)
class PortTrafficTest {

  /** TCP sockets this JVM has listening now (from /proc: the namespace's listening sockets that are this process's). */
  static int listeningSockets() throws IOException {
    Set<String> listening = new HashSet<>();
    for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
      List<String> lines = Files.readAllLines(Path.of(table)); // once: sockets come and go between two reads
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        if (f[3].equals("0A")) { // TCP_LISTEN
          listening.add(f[9]);
        }
      }
    }
    int mine = 0;
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[") && listening.contains(target.substring(8, target.length() - 1))) {
            mine++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    return mine;
  }

  private static HttpResponse<String> toPort(HttpClient http, LocalServer server, String sandboxId, int port,
      String token, String path) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(server.sandboxUrl().resolve(path)).timeout(Duration.ofSeconds(30))
        .header("E2b-Sandbox-Id", sandboxId).header("E2b-Sandbox-Port", Integer.toString(port));
    if (token != null) {
      b.header("e2b-traffic-access-token", token);
    }
    return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Sends 1000 requests to 1000 different ports of a sandbox, eight at a time; returns their statuses. */
  private static Set<Integer> thousandPorts(LocalServer server, String sandboxId) throws Exception {
    Set<Integer> statuses = java.util.concurrent.ConcurrentHashMap.newKeySet();
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ExecutorService pool = Executors.newFixedThreadPool(8)) {
      List<Future<?>> all = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        int port = 20000 + i;
        all.add(pool.submit(() -> {
          statuses.add(toPort(http, server, sandboxId, port, null, "/").statusCode());
          return null;
        }));
      }
      for (Future<?> f : all) {
        f.get();
      }
    }
    return statuses;
  }

  @Test
  @DisplayName("1000 requests to 1000 ports of a sandbox, with no token, leave no listener on the host: each is relayed over the daemon (502: nothing listens there)")
  void noListenerPerPort(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      int before = listeningSockets();
      assertThat(thousandPorts(server, s.id())).containsExactly(502);
      assertThat(listeningSockets()).as("the JVM's listening sockets").isEqualTo(before);
    }
  }

  @Test
  @DisplayName("allowPublicTraffic:false: create answers a trafficAccessToken; a port request without it or with another is refused 403 (and opens nothing), with it the service answers; envd's own port is unaffected")
  void trafficToken(E2BApi e2b, LocalServer server) throws Exception {
    String id = null;
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> created = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\",\"timeout\":120,\"network\":{\"allowPublicTraffic\":false}}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      JsonNode body = Json.parse(created.body().getBytes(StandardCharsets.UTF_8));
      id = body.path("sandboxID").asText();
      String token = body.path("trafficAccessToken").asText("");
      assertThat(token).isNotBlank().isNotEqualTo(body.path("envdAccessToken").asText());
      JsonNode info = Json.parse(http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + id))
          .header("X-API-KEY", server.apiKey()).build(), HttpResponse.BodyHandlers.ofString()).body().getBytes(StandardCharsets.UTF_8));
      assertThat(info.path("network").path("allowPublicTraffic").asBoolean(true)).isFalse();

      LiveSandbox s = e2b.connect(id);
      s.writeFile("/home/user/site/hello.txt", "private hello\n");
      s.exec("cd /home/user/site && (nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)").orThrow();
      String sid = id;
      await().atMost(Duration.ofSeconds(30)).until(() -> toPort(http, server, sid, 8000, token, "/hello.txt").statusCode() == 200);
      assertThat(toPort(http, server, id, 8000, token, "/hello.txt").body()).isEqualTo("private hello\n");

      HttpResponse<String> missing = toPort(http, server, id, 8000, null, "/hello.txt");
      assertThat(missing.statusCode()).isEqualTo(403);
      JsonNode refusal = Json.parse(missing.body().getBytes(StandardCharsets.UTF_8));
      assertThat(refusal.path("code").asInt()).isEqualTo(403);
      assertThat(refusal.path("sandboxId").asText()).isEqualTo(id);
      assertThat(refusal.path("message").asText()).contains("e2b-traffic-access-token");
      assertThat(toPort(http, server, id, 8000, "not-" + token, "/hello.txt").statusCode()).isEqualTo(403);
      assertThat(toPort(http, server, id, 8000, body.path("envdAccessToken").asText(), "/hello.txt").statusCode()).isEqualTo(403);

      int before = listeningSockets();
      assertThat(thousandPorts(server, id)).containsExactly(403);
      assertThat(listeningSockets()).isEqualTo(before);

      // envd's port keeps its own check (the access token), not the traffic token
      assertThat(s.exec("echo envd").stdout()).isEqualTo("envd\n");
      // a network update does not make the ports public again
      e2b.updateNetwork(id, List.of(), List.of());
      assertThat(toPort(http, server, id, 8000, null, "/hello.txt").statusCode()).isEqualTo(403);
    } finally {
      if (id != null) {
        e2b.kill(id);
      }
    }
  }

  @Test
  @DisplayName("a public sandbox's port needs no token, and a token given anyway is not passed to the service")
  void publicNeedsNoToken(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      s.writeFile("/home/user/echo.py", """
          from http.server import BaseHTTPRequestHandler, HTTPServer
          class H(BaseHTTPRequestHandler):
              def do_GET(self):
                  body = ("|".join(sorted(k.lower() for k in self.headers.keys()))).encode()
                  self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
                  self.wfile.write(body)
          HTTPServer(("127.0.0.1", 8100), H).serve_forever()
          """);
      s.exec("(nohup python3 /home/user/echo.py >/dev/null 2>&1 &)").orThrow();
      await().atMost(Duration.ofSeconds(30)).until(() -> toPort(http, server, s.id(), 8100, null, "/").statusCode() == 200);
      String seen = toPort(http, server, s.id(), 8100, "anything", "/").body();
      assertThat(seen).doesNotContain("e2b-traffic-access-token").doesNotContain("e2b-sandbox-id").contains("host");
    }
  }

  @Test
  @DisplayName("preview listeners: at most 16 per sandbox (the 17th is refused by name), and one unused for its idle time stops listening")
  void previewListenersBounded(E2BApi unused) throws Exception {
    try (LocalServer server = TestRuntime.builder().warmPool(0).portForwardIdleTimeout(Duration.ofSeconds(2)).build().start();
        io.sandboxes.e2b.E2BSandboxProvider provider = io.sandboxes.e2b.E2BSandboxProvider.builder().apiUrl(server.apiUrl())
            .sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
        LiveSandbox s = provider.api().create()) {
      int before = listeningSockets();
      List<URI> urls = new ArrayList<>();
      for (int p = 1; p <= 16; p++) {
        urls.add(server.forward(s.id(), 9000 + p));
      }
      assertThat(listeningSockets()).isEqualTo(before + 16);
      assertThatThrownBy(() -> server.forward(s.id(), 9100)).isInstanceOf(SandboxException.class).hasMessageContaining("16 forwarded ports");
      // kept in use, one stays; the rest go once idle for 2 s
      URI kept = urls.get(0);
      long until = System.nanoTime() + Duration.ofSeconds(6).toNanos();
      while (System.nanoTime() < until) {
        try (Socket ignored = new Socket(kept.getHost(), kept.getPort())) {
          java.util.concurrent.locks.LockSupport.parkNanos(500_000_000L);
        }
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> listeningSockets() == before + 1);
      assertThat(server.forward(s.id(), 9001)).isEqualTo(kept);
      assertThat(server.forward(s.id(), 9100)).as("room again").isNotNull();
    }
  }
}
