package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Hardening item 5: a request whose headers or body stall is closed after the short request idle
 * timeout (2 s here, 30 s by default, 5 minutes before), while an answer that is quiet for longer
 * than that (a process stream between keepalives) is not cut, and a kept-alive connection waits
 * for its next request under the longer keep-alive timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StallTimeoutTest {
  private static final Duration SHORT = Duration.ofSeconds(2);
  /** The keep-alive timeout here: three times the short one. */
  private static final Duration KEEP = Duration.ofSeconds(6);
  /** The short timeout plus room for a loaded machine; the old 5-minute timeout misses it by far. */
  private static final long CLOSED_WITHIN_MS = 10_000;

  private LocalServer server;
  private E2BSandboxProvider provider;
  private LiveSandbox sandbox;
  private String token;

  @BeforeAll
  void start() throws Exception {
    server = LocalServer.builder().requestIdleTimeout(SHORT).keepAliveTimeout(KEEP).build().start();
    provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
    sandbox = provider.api().create();
    token = Tokens.envdToken(server, sandbox.id());
  }

  @AfterAll
  void stop() {
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /**
   * Sends {@code partial} and nothing more, then reads until the server closes.
   *
   * @return how long the server took to close, in ms
   */
  private static long closedAfter(URI at, String partial) throws Exception {
    try (Socket s = new Socket(at.getHost(), at.getPort())) {
      s.setSoTimeout((int) CLOSED_WITHIN_MS);
      OutputStream out = s.getOutputStream();
      out.write(partial.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      long started = System.nanoTime();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      try {
        while (in.read(buf) >= 0) {
          // whatever the server says (an error answer, if any) before it closes
        }
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the stalled connection was still open after " + CLOSED_WITHIN_MS + " ms", e);
      } catch (java.net.SocketException e) {
        // a reset is a close too
      }
      return (System.nanoTime() - started) / 1_000_000;
    }
  }

  @Test
  @DisplayName("a client that sends half its headers and then nothing is closed after the short timeout")
  void stalledHeaders() throws Exception {
    URI api = server.apiUrl();
    long ms = closedAfter(api, "GET /sandboxes HTTP/1.1\r\nHost: " + api.getHost() + "\r\nX-API-KE");
    assertThat(ms).isBetween(SHORT.toMillis() - 200, CLOSED_WITHIN_MS);
  }

  @Test
  @DisplayName("a client that sends its headers and half the body it declared, then nothing, is closed after the short timeout")
  void stalledBody() throws Exception {
    URI api = server.apiUrl();
    long ms = closedAfter(api, "POST /sandboxes HTTP/1.1\r\nHost: " + api.getHost() + "\r\nX-API-KEY: " + server.apiKey()
        + "\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"templateID\":\"ba");
    assertThat(ms).isBetween(SHORT.toMillis() - 200, CLOSED_WITHIN_MS);
    // and on envd's port, mid-way through a Connect request's body
    URI envd = server.sandboxUrl();
    long envdMs = closedAfter(envd, "POST /process.Process/Start HTTP/1.1\r\nHost: " + envd.getHost()
        + "\r\nE2b-Sandbox-Id: " + sandbox.id() + "\r\nX-Access-Token: " + token
        + "\r\nConnect-Protocol-Version: 1\r\nContent-Type: application/connect+json\r\nContent-Length: 100\r\n\r\n\0\0\0\0");
    assertThat(envdMs).isBetween(SHORT.toMillis() - 200, CLOSED_WITHIN_MS);
  }

  @Test
  @DisplayName("a process stream quiet for three times the short timeout, between keepalives, stays open and gets its end")
  void quietStreamIsNotCut() throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      ObjectNode body = Json.object();
      body.putObject("process").put("cmd", "/bin/bash").putArray("args").add("-c").add("sleep 4; echo done");
      HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/process.Process/Start"))
          .header("E2b-Sandbox-Id", sandbox.id())
          .header("X-Access-Token", token)
          .header("Content-Type", Connect.STREAM_CONTENT_TYPE)
          .header("Connect-Protocol-Version", "1")
          .header("Keepalive-Ping-Interval", "3") // the first keepalive comes 3 s after the start: 3 s of silence
          .POST(HttpRequest.BodyPublishers.ofByteArray(Connect.envelope(0, Json.bytes(body)))).build(),
          HttpResponse.BodyHandlers.ofInputStream());
      assertThat(r.statusCode()).isEqualTo(200);
      List<String> kinds = new ArrayList<>();
      try (InputStream in = r.body()) {
        Connect.Envelope env;
        while ((env = Connect.read(in)) != null) {
          if (env.endStream()) {
            kinds.add("eos " + new String(env.payload(), StandardCharsets.UTF_8));
            break;
          }
          kinds.add(Json.parse(env.payload()).path("event").fieldNames().next());
        }
      }
      assertThat(kinds.get(0)).isEqualTo("start");
      assertThat(kinds).contains("keepalive", "data");
      assertThat(kinds.subList(kinds.size() - 2, kinds.size())).containsExactly("end", "eos {}");
    }
  }

  @Test
  @DisplayName("a download that a slow client stops reading for three times the short timeout is not cut")
  void slowReaderIsNotCut() throws Exception {
    long size = 48L << 20; // far more than loopback's socket buffers hold, so the server's writes block
    assertThat(sandbox.exec("head -c " + size + " /dev/zero > /home/user/big.bin").exitCode()).isZero();
    URI envd = server.sandboxUrl();
    try (Socket s = new Socket()) {
      s.setReceiveBufferSize(64 * 1024);
      s.connect(new java.net.InetSocketAddress(envd.getHost(), envd.getPort()));
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      out.write(("GET /files?path=/home/user/big.bin&username=user HTTP/1.1\r\nHost: " + envd.getHost()
          + "\r\nE2b-Sandbox-Id: " + sandbox.id() + "\r\nX-Access-Token: " + token + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[64 * 1024];
      long total = in.read(buf);
      // the stimulus itself, not a wait for anything: a client that does not read for 3 s
      Thread.sleep(3 * SHORT.toMillis());
      int n;
      while ((n = in.read(buf)) >= 0) {
        total += n;
      }
      assertThat(total).as("bytes received, headers included").isGreaterThan(size);
    }
  }

  /** Reads one answer's status line and headers; the answers read here have no body. */
  private static int statusOf(InputStream in) throws Exception {
    StringBuilder head = new StringBuilder();
    while (head.length() < 4 || !head.substring(head.length() - 4).equals("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new AssertionError("the server closed the connection before answering; read: " + head);
      }
      head.append((char) b);
    }
    assertThat(head.toString().toLowerCase(java.util.Locale.ROOT)).doesNotContain("transfer-encoding");
    return Integer.parseInt(head.substring(9, 12));
  }

  @Test
  @DisplayName("a kept-alive connection idle past the request timeout takes the next request, and is closed after the keep-alive timeout")
  void keptAliveConnectionOutlivesTheRequestTimeout() throws Exception {
    URI api = server.apiUrl();
    byte[] health = ("GET /health HTTP/1.1\r\nHost: " + api.getHost() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    try (Socket s = new Socket(api.getHost(), api.getPort())) {
      s.setSoTimeout((int) (KEEP.toMillis() + CLOSED_WITHIN_MS));
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      out.write(health);
      out.flush();
      assertThat(statusOf(in)).isEqualTo(204);
      // the stimulus, not a wait for anything: a client that reuses its connection after twice the request timeout
      Thread.sleep(2 * SHORT.toMillis());
      out.write(health);
      out.flush();
      assertThat(statusOf(in)).isEqualTo(204);
      long started = System.nanoTime();
      try {
        assertThat(in.read()).as("the server closes the idle connection").isEqualTo(-1);
      } catch (java.net.SocketException e) {
        // a reset is a close too
      }
      long ms = (System.nanoTime() - started) / 1_000_000;
      assertThat(ms).isBetween(KEEP.toMillis() - 200, KEEP.toMillis() + CLOSED_WITHIN_MS);
    }
  }

  @Test
  @DisplayName("by default a server keeps idle connections longer than the JDK's HTTP client keeps its own")
  void defaultKeepAliveOutlastsTheJdkClients() {
    long jdkSeconds = Long.getLong("jdk.httpclient.keepalive.timeout", 30);
    assertThat(LocalServer.DEFAULT_KEEP_ALIVE_TIMEOUT).isGreaterThan(Duration.ofSeconds(jdkSeconds));
    assertThat(LocalServer.DEFAULT_KEEP_ALIVE_TIMEOUT).isGreaterThan(LocalServer.DEFAULT_REQUEST_IDLE_TIMEOUT);
  }
}
