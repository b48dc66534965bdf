package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The client's connection to the port proxy, as a client that keeps connections alive sees it:
 * after a relayed request with a body, the connection is either reusable or its answer says it
 * closes. A connection dropped after an answer that did not say so makes the client's next
 * request on it fail unanswered ("header parser received no bytes" in the JDK's client), which
 * is what a relayed body not read to its end before the answer completed did.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PortProxyConnectionTest {
  private static final int PORT = 8130;
  private LiveSandbox sandbox;
  private LocalServer server;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) {
    this.server = server;
    sandbox = e2b.create();
    sandbox.writeFile("/home/user/svc.py", """
        import time
        from http.server import BaseHTTPRequestHandler, HTTPServer
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                if self.path == "/early":
                    # answers before reading the body, then takes what came of it
                    self.answer(b"early")
                    time.sleep(1)
                    self.connection.settimeout(2)
                    try:
                        self.rfile.read(length)
                    except OSError:
                        pass
                    return
                body = self.rfile.read(length)
                self.answer(str(len(body)).encode())
            def answer(self, data):
                self.send_response(200); self.send_header("Content-Length", str(len(data))); self.end_headers()
                self.wfile.write(data); self.wfile.flush()
        HTTPServer(("127.0.0.1", %d), H).serve_forever()
        """.formatted(PORT));
    sandbox.exec("(nohup python3 /home/user/svc.py >/dev/null 2>&1 &)").orThrow();
    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
      try (Socket s = connect()) {
        return post(s, "/echo", "x".getBytes(StandardCharsets.US_ASCII), 1).status == 200;
      }
    });
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", server.sandboxUrl().getPort());
    s.setSoTimeout(30_000);
    s.setTcpNoDelay(true);
    return s;
  }

  @Test
  @DisplayName("200 posts with bodies on one kept-alive connection: each answered, none closing it")
  void keptAlive() throws Exception {
    try (Socket s = connect()) {
      for (int i = 0; i < 200; i++) {
        byte[] body = ("request " + i).repeat(1 + i % 7).getBytes(StandardCharsets.US_ASCII);
        Answer a = post(s, "/echo", body, body.length);
        assertThat(a.status).as("request %d", i).isEqualTo(200);
        assertThat(a.body).as("request %d", i).isEqualTo(Integer.toString(body.length));
        assertThat(a.headers).as("request %d", i).doesNotContainKey("connection");
      }
      // and the connection is still there: no end of stream waits on it
      s.setSoTimeout(200);
      try {
        int b = s.getInputStream().read();
        assertThat(b).as("the server closed a connection its answers did not say would close").isNotEqualTo(-1);
      } catch (SocketTimeoutException expected) {
        // open and quiet, as it should be
      }
    }
  }

  @Test
  @DisplayName("a service answering before the body is read whole: the answer says the connection closes, and it does")
  void answeredBeforeTheBody() throws Exception {
    try (Socket s = connect()) {
      byte[] part = new byte[4096];
      Answer a = post(s, "/early", part, 1 << 20); // a megabyte declared, 4 KiB sent
      assertThat(a.status).isEqualTo(200);
      assertThat(a.body).isEqualTo("early");
      assertThat(a.headers).containsEntry("connection", "close");
      s.setSoTimeout(10_000);
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
    // and the proxy serves the next connection as before
    try (Socket s = connect()) {
      assertThat(post(s, "/echo", "again".getBytes(StandardCharsets.US_ASCII), 5).body).isEqualTo("5");
    }
  }

  @Test
  @DisplayName("inside the sandbox, its service answers at 0.0.0.0 and localhost as at 127.0.0.1: the proxy variables leave all three out")
  void reachedInsideByEveryLocalName() {
    for (String host : java.util.List.of("127.0.0.1", "0.0.0.0", "localhost")) {
      String code = sandbox.exec("curl -s -o /dev/null -w '%{http_code}' -d abc http://" + host + ":" + PORT + "/echo").orThrow().stdout();
      assertThat(code).as("curl to %s", host).isEqualTo("200");
    }
  }

  @Test
  @DisplayName("maskRequestHost: the service sees that Host, ${PORT} filled in, for requests through the port proxy; info reports it; an update keeps it and cannot change it")
  void maskRequestHost(E2BApi e2b) throws Exception {
    SandboxNetwork masked = SandboxNetwork.defaults().withMaskRequestHost("custom-host.example.com:${PORT}");
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(masked))) {
      s.writeFile("/home/user/host.py", """
          from http.server import BaseHTTPRequestHandler, HTTPServer
          class H(BaseHTTPRequestHandler):
              def do_GET(self):
                  body = (self.headers.get("Host") or "").encode()
                  self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
                  self.wfile.write(body)
          HTTPServer(("127.0.0.1", 8131), H).serve_forever()
          """);
      s.exec("(nohup python3 /home/user/host.py >/dev/null 2>&1 &)").orThrow();
      java.net.http.HttpRequest.Builder get = java.net.http.HttpRequest.newBuilder(server.sandboxUrl().resolve("/"))
          .header("E2b-Sandbox-Id", s.id()).header("E2b-Sandbox-Port", "8131");
      try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() ->
            http.send(get.build(), java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        assertThat(http.send(get.build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body())
            .isEqualTo("custom-host.example.com:8131");
        assertThat(s.info().network().maskRequestHost()).isEqualTo("custom-host.example.com:${PORT}");
        e2b.updateNetwork(s.id(), SandboxNetwork.allowOnly("10.9.8.7"));
        assertThat(s.info().network().maskRequestHost()).as("kept by an update").isEqualTo("custom-host.example.com:${PORT}");
        assertThat(http.send(get.build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body())
            .isEqualTo("custom-host.example.com:8131");
        // the Java client refuses it before sending; the server too, for a client that sends it
        java.net.http.HttpResponse<String> changed = http.send(java.net.http.HttpRequest.newBuilder(
                server.apiUrl().resolve("/sandboxes/" + s.id() + "/network")).header("X-API-Key", server.apiKey())
            .header("Content-Type", "application/json")
            .PUT(java.net.http.HttpRequest.BodyPublishers.ofString("{\"maskRequestHost\":\"other.example.com\"}")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(changed.statusCode()).isEqualTo(400);
        assertThat(changed.body()).contains("'maskRequestHost' is fixed when the sandbox is created");
        assertThat(s.info().network().maskRequestHost()).isEqualTo("custom-host.example.com:${PORT}");
      }
    }
  }

  private record Answer(int status, Map<String, String> headers, String body) {}

  /** Sends a POST's head, then (in a write of its own) the bytes given of a body of the length declared. */
  private Answer post(Socket s, String path, byte[] body, int declared) throws IOException {
    OutputStream out = s.getOutputStream();
    StringBuilder head = new StringBuilder().append("POST ").append(path).append(" HTTP/1.1\r\n")
        .append("Host: 127.0.0.1\r\n").append("E2b-Sandbox-Id: ").append(sandbox.id()).append("\r\n")
        .append("E2b-Sandbox-Port: ").append(PORT).append("\r\n").append("Content-Length: ").append(declared).append("\r\n");
    if (sandbox.trafficAccessToken() != null) {
      head.append("e2b-traffic-access-token: ").append(sandbox.trafficAccessToken()).append("\r\n");
    }
    out.write(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
    out.flush();
    out.write(body);
    out.flush();
    return read(s.getInputStream());
  }

  private static Answer read(InputStream in) throws IOException {
    String status = line(in);
    assertThat(status).as("the answer's status line (an empty one: the connection closed unanswered)").startsWith("HTTP/1.1 ");
    Map<String, String> headers = new TreeMap<>();
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      int colon = h.indexOf(':');
      headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      for (int n = Integer.parseInt(line(in).trim(), 16); n > 0; n = Integer.parseInt(line(in).trim(), 16)) {
        body.write(in.readNBytes(n));
        line(in);
      }
      line(in);
    } else {
      body.write(in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0"))));
    }
    return new Answer(Integer.parseInt(status.substring(9, 12)), headers, body.toString(StandardCharsets.UTF_8));
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }
}
