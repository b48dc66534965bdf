package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxState;
import io.sandboxes.SandboxSpec;
import io.sandboxes.OnTimeout;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Traffic to a paused sandbox's port, as E2B's proxy takes it: with {@code autoResume} and a pause
 * that kept its memory, a request by {@code E2b-Sandbox-Port}, by E2B's host name
 * ({@code <port>-<id>.<domain>}, what {@code getHost} builds) or through a preview listener
 * resumes the sandbox, whose deadline restarts, and is answered by the service that was frozen;
 * without {@code autoResume}, or for a filesystem-only pause, E2B's 502 and the sandbox stays
 * paused; for a sandbox killed while paused, E2B's not-found.
 */
@ExtendWith(SharedServer.class)
class PortResumeTest {
  private static final int PORT = 8000;

  static final class Answer {
    final int status;
    final String head;
    final String body;

    Answer(int status, String head, String body) {
      this.status = status;
      this.head = head;
      this.body = body;
    }

    JsonNode json() throws IOException {
      return Json.parse(body.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A GET over a plain socket, so the Host header is the test's to choose (java.net.http will not send one). */
  static Answer get(URI at, String host, String path) throws IOException {
    try (Socket s = new Socket(at.getHost(), at.getPort())) {
      s.setSoTimeout(60_000);
      s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      s.getInputStream().transferTo(all);
      String raw = all.toString(StandardCharsets.ISO_8859_1);
      int end = raw.indexOf("\r\n\r\n");
      if (end < 0) {
        return new Answer(-1, raw, "");
      }
      String head = raw.substring(0, end);
      String body = raw.substring(end + 4);
      if (head.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked")) {
        body = unchunk(body);
      }
      return new Answer(Integer.parseInt(head.substring(9, 12)), head, body);
    }
  }

  private static String unchunk(String chunked) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (true) {
      int eol = chunked.indexOf("\r\n", i);
      int n = Integer.parseInt(chunked.substring(i, eol).strip(), 16);
      if (n == 0) {
        return out.toString();
      }
      out.append(chunked, eol + 2, eol + 2 + n);
      i = eol + 2 + n + 2;
    }
  }

  static HttpResponse<String> byHeader(LocalServer server, String id, String path) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      return http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve(path)).timeout(Duration.ofSeconds(60))
          .header("E2b-Sandbox-Id", id).header("E2b-Sandbox-Port", Integer.toString(PORT)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }

  /** E2B's host name for the port, as the official SDK's {@code getHost(port)} builds it. */
  static String host(String id) {
    return PORT + "-" + id + ".e2b.app";
  }

  /** A sandbox serving {@code /home/user/site} on port 8000, up and answering. */
  static void serve(LocalServer server, LiveSandbox s) throws Exception {
    s.writeFile("/home/user/site/hello.txt", "hello from " + s.id() + "\n");
    s.exec("cd /home/user/site && (nohup python3 -m http.server " + PORT + " --bind 127.0.0.1 >/dev/null 2>&1 &)").orThrow();
    await().atMost(Duration.ofSeconds(30)).until(() -> byHeader(server, s.id(), "/hello.txt").statusCode() == 200);
  }

  static long resumes(LocalServer server, String id) {
    return server.registry().find(id).orElseThrow().logLines().stream().filter(l -> l.message().startsWith("resumed")).count();
  }

  private static SandboxSpec autoResume() {
    return SandboxSpec.defaults().withTimeout(Duration.ofMinutes(3)).withOnTimeout(OnTimeout.PAUSE).withAutoResume(true);
  }

  @Test
  @DisplayName("autoResume: a request by E2b-Sandbox-Port, by E2B's host name and through a preview listener each resumes the paused sandbox once, is answered by its frozen service, and restarts its deadline")
  void trafficWakes(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(autoResume())) {
      serve(server, s);
      String hello = "hello from " + s.id() + "\n";

      // by E2b-Sandbox-Port
      s.setTimeout(Duration.ofSeconds(40));
      assertThat(s.pause()).isTrue();
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.PAUSED);
      HttpResponse<String> woke = byHeader(server, s.id(), "/hello.txt");
      assertThat(woke.statusCode()).as(woke.body()).isEqualTo(200);
      assertThat(woke.body()).isEqualTo(hello);
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      // the deadline restarts as on a resume by call: the create's 3 minutes from now, not the 40 s left before
      assertThat(e2b.info(s.id()).endAt()).isAfter(Instant.now().plusSeconds(150));
      assertThat(resumes(server, s.id())).isEqualTo(1);

      // by host name, no sandbox header at all
      assertThat(s.pause()).isTrue();
      Answer byHost = get(server.sandboxUrl(), host(s.id()), "/hello.txt");
      assertThat(byHost.status).as(byHost.head).isEqualTo(200);
      assertThat(byHost.body).isEqualTo(hello);
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(resumes(server, s.id())).isEqualTo(2);

      // through a preview listener (previewUrl's forward)
      URI preview = server.forward(s.id(), PORT);
      assertThat(s.pause()).isTrue();
      Answer forwarded = get(preview, preview.getAuthority(), "/hello.txt");
      assertThat(forwarded.status).as(forwarded.head).isEqualTo(200);
      assertThat(forwarded.body).isEqualTo(hello);
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(resumes(server, s.id())).isEqualTo(3);

      // a running sandbox's traffic resumes nothing
      assertThat(get(server.sandboxUrl(), host(s.id()), "/hello.txt").status).isEqualTo(200);
      assertThat(resumes(server, s.id())).isEqualTo(3);
    }
  }

  @Test
  @DisplayName("no autoResume, or a filesystem-only pause: E2B's 502 naming the pause, by header and by host name; a preview connection is closed unanswered; the sandbox stays paused")
  void trafficDoesNotWake(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox plain = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(3)).withOnTimeout(OnTimeout.PAUSE));
        LiveSandbox cold = e2b.create(autoResume())) {
      serve(server, plain);
      serve(server, cold);
      URI preview = server.forward(plain.id(), PORT);
      assertThat(plain.pause()).isTrue();
      assertThat(e2b.pause(cold.id(), false)).isTrue();

      HttpResponse<String> refused = byHeader(server, plain.id(), "/hello.txt");
      assertThat(refused.statusCode()).isEqualTo(502);
      JsonNode body = Json.parse(refused.body().getBytes(StandardCharsets.UTF_8));
      assertThat(body.path("code").asInt()).isEqualTo(502);
      assertThat(body.path("sandboxId").asText()).isEqualTo(plain.id());
      assertThat(body.path("message").asText()).contains("paused").contains("autoResume");
      Answer byHost = get(server.sandboxUrl(), host(plain.id()), "/hello.txt");
      assertThat(byHost.status).isEqualTo(502);
      assertThat(byHost.json().path("message").asText()).contains("paused");
      Answer forwarded = get(preview, preview.getAuthority(), "/hello.txt");
      assertThat(forwarded.status).as("closed with no answer").isEqualTo(-1);
      assertThat(forwarded.head).isEmpty();

      Answer coldAnswer = get(server.sandboxUrl(), host(cold.id()), "/hello.txt");
      assertThat(coldAnswer.status).isEqualTo(502);
      assertThat(coldAnswer.json().path("message").asText()).contains("only its filesystem");

      assertThat(e2b.info(plain.id()).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.info(cold.id()).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(resumes(server, plain.id())).isZero();
      assertThat(resumes(server, cold.id())).isZero();
      // connect still resumes both
      assertThat(e2b.connect(plain.id()).exec("echo back").stdout()).isEqualTo("back\n");
      assertThat(e2b.connect(cold.id()).readFile("/home/user/site/hello.txt")).isEqualTo("hello from " + cold.id() + "\n");
    }
  }

  @Test
  @DisplayName("a sandbox killed while paused, or never made: E2B's not-found (502 'The sandbox was not found'), by header and by host name, and nothing is resumed")
  void goneIsNotFound(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox s = e2b.create(autoResume());
    String id = s.id();
    assertThat(s.pause()).isTrue();
    assertThat(e2b.kill(id)).isTrue();
    for (Answer a : new Answer[] {get(server.sandboxUrl(), host(id), "/"), get(server.sandboxUrl(), host("abcdefghij0123456789"), "/")}) {
      assertThat(a.status).isEqualTo(502);
      assertThat(a.json().path("message").asText()).startsWith("The sandbox was not found");
    }
    HttpResponse<String> byHeader = byHeader(server, id, "/");
    assertThat(byHeader.statusCode()).isEqualTo(502);
    assertThat(byHeader.body()).contains("The sandbox was not found");
    assertThat(server.registry().find(id)).isEmpty();
  }

  @Test
  @DisplayName("a request named by host name for envd's own port reaches envd, as E2B's 49983-<id> host does")
  void envdByHostName(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      Answer health = get(server.sandboxUrl(), "49983-" + s.id() + ".e2b.app", "/health");
      assertThat(health.status).as(health.head).isEqualTo(204);
    }
  }
}
