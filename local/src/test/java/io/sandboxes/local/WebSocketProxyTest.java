package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * WebSockets through the port proxy, addressed as E2B's SDK addresses a sandbox's port: by
 * {@code E2b-Sandbox-Port} and by {@code <port>-<id>.<domain>} (getHost). The services are a real
 * WebSocket echo server in a real sandbox, one that never answers the handshake, and one that
 * floods once switched.
 */
@ExtendWith(SharedServer.class)
class WebSocketProxyTest {
  private static final int ECHO = 8765;
  private static final int SILENT = 8766;
  private static final int FLOOD = 8767;
  /** PortUpgrade.MAX_PER_SANDBOX, which the test states rather than reads: the documented cap. */
  private static final int CAP = 64;

  private static void serve(LiveSandbox s) throws IOException {
    try (InputStream script = WebSocketProxyTest.class.getResourceAsStream("ws_servers.py")) {
      s.writeBytes("/home/user/ws_servers.py", script.readAllBytes());
    }
    s.exec("cd /home/user && (nohup python3 ws_servers.py >ws.log 2>&1 &)").orThrow();
  }

  /** An upgrade request over a plain socket, so the Host is the test's to choose; the socket is left open. */
  private static Socket handshake(URI at, String host, String sandboxId, Integer portHeader) throws IOException {
    Socket sock = new Socket(at.getHost(), at.getPort());
    sock.setSoTimeout(30_000);
    StringBuilder req = new StringBuilder("GET /chat HTTP/1.1\r\nHost: ").append(host).append("\r\n");
    if (portHeader != null) {
      req.append("E2b-Sandbox-Id: ").append(sandboxId).append("\r\nE2b-Sandbox-Port: ").append(portHeader).append("\r\n");
    }
    req.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
        .append("Sec-WebSocket-Version: 13\r\n\r\n");
    sock.getOutputStream().write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
    sock.getOutputStream().flush();
    return sock;
  }

  /** The answer's head, read byte by byte so nothing after it is consumed. */
  private static String head(Socket sock) throws IOException {
    InputStream in = sock.getInputStream();
    ByteArrayOutputStream h = new ByteArrayOutputStream();
    while (!h.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      h.write(b);
    }
    return h.toString(StandardCharsets.ISO_8859_1);
  }

  /** One masked text frame out, one frame back: its payload. */
  private static String echo(Socket sock, String text) throws IOException {
    byte[] p = text.getBytes(StandardCharsets.UTF_8);
    byte[] mask = {1, 2, 3, 4};
    OutputStream out = sock.getOutputStream();
    out.write(new byte[] {(byte) 0x81, (byte) (0x80 | p.length)});
    out.write(mask);
    for (int i = 0; i < p.length; i++) {
      p[i] ^= mask[i % 4];
    }
    out.write(p);
    out.flush();
    InputStream in = sock.getInputStream();
    byte[] h = in.readNBytes(2);
    assertThat(h[0] & 0xff).isEqualTo(0x81);
    return new String(in.readNBytes(h[1] & 0x7f), StandardCharsets.UTF_8);
  }

  /** A socket switched to WebSocket by host name, or null (closed) when the answer was not 101. */
  private static Socket switched(URI at, String host, String sandboxId) throws IOException {
    Socket sock = handshake(at, host, sandboxId, null);
    if (head(sock).startsWith("HTTP/1.1 101")) {
      return sock;
    }
    sock.close();
    return null;
  }

  private static String host(int port, String id) {
    return port + "-" + id + ".e2b.app";
  }

  /** Collects whole messages; each completes the next future in line. */
  private static final class Listener implements WebSocket.Listener {
    final List<CompletableFuture<Object>> messages = new ArrayList<>();
    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();
    private int next;

    Listener(int expected) {
      for (int i = 0; i < expected; i++) {
        messages.add(new CompletableFuture<>());
      }
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        messages.get(next++).complete(text.toString());
        text.setLength(0);
      }
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      byte[] b = new byte[data.remaining()];
      data.get(b);
      binary.writeBytes(b);
      if (last) {
        messages.get(next++).complete(binary.toByteArray());
        binary.reset();
      }
      ws.request(1);
      return null;
    }
  }

  @Test
  @DisplayName("by E2b-Sandbox-Port: java.net.http's WebSocket talks to an echo server in the sandbox, text and a 300 KiB binary message both ways")
  void byPortHeader(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      serve(s);
      URI ws = URI.create("ws://127.0.0.1:" + server.sandboxUrl().getPort() + "/chat");
      Listener listener = new Listener(2);
      WebSocket socket = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> http.newWebSocketBuilder()
          .header("E2b-Sandbox-Id", s.id()).header("E2b-Sandbox-Port", String.valueOf(ECHO))
          .buildAsync(ws, listener).get(10, TimeUnit.SECONDS), w -> w != null);
      socket.sendText("hello through the proxy", true).get(10, TimeUnit.SECONDS);
      assertThat(listener.messages.get(0).get(20, TimeUnit.SECONDS)).isEqualTo("hello through the proxy");
      byte[] blob = new byte[300 * 1024];
      new Random(3).nextBytes(blob);
      socket.sendBinary(ByteBuffer.wrap(blob), true).get(20, TimeUnit.SECONDS);
      assertThat((byte[]) listener.messages.get(1).get(30, TimeUnit.SECONDS)).isEqualTo(blob);
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  @DisplayName("by E2B's host name: a paused autoResume sandbox is woken by the handshake, the service sees the Host, answers 101 with its accept key, and echoes")
  void byHostNameWakes(E2BApi e2b, LocalServer server) throws Exception {
    SandboxSpec spec = SandboxSpec.defaults().withTimeout(Duration.ofMinutes(3)).withOnTimeout(OnTimeout.PAUSE).withAutoResume(true);
    try (LiveSandbox s = e2b.create(spec)) {
      serve(s);
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
        try (Socket probe = handshake(server.sandboxUrl(), host(ECHO, s.id()), s.id(), null)) {
          return head(probe).startsWith("HTTP/1.1 101");
        }
      });
      assertThat(s.pause()).isTrue();
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.PAUSED);
      try (Socket sock = handshake(server.sandboxUrl(), host(ECHO, s.id()), s.id(), null)) {
        String head = head(sock);
        assertThat(head).startsWith("HTTP/1.1 101").containsIgnoringCase("Upgrade: websocket")
            .containsIgnoringCase("Connection: Upgrade")
            .contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") // RFC 6455's example key's accept
            .contains("X-Seen-Host: " + host(ECHO, s.id()));
        assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(echo(sock, "first")).isEqualTo("first");
        assertThat(echo(sock, "second, on the same connection")).isEqualTo("second, on the same connection");
      }
    }
  }

  @Test
  @DisplayName("bounded: a sandbox's upgraded connections are capped (a handshake never answered counts until its 504), a flood once switched holds nothing after its client leaves, and each slot comes back")
  void bounded(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      serve(s);
      URI at = server.sandboxUrl();
      List<Socket> open = new ArrayList<>();
      try {
        // a service that answers 101 and then sends without end, to a client that reads nothing after the head
        Socket flooded = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
            .until(() -> switched(at, host(FLOOD, s.id()), s.id()), java.util.Objects::nonNull);
        open.add(flooded);
        for (int i = open.size(); i < CAP - 1; i++) {
          Socket sock = handshake(at, "127.0.0.1", s.id(), ECHO);
          assertThat(head(sock)).startsWith("HTTP/1.1 101");
          open.add(sock);
        }
        // the flood did not stall the others: each echoes while it waits
        assertThat(echo(open.get(CAP - 2), "still here")).isEqualTo("still here");
        Socket silent = handshake(at, host(SILENT, s.id()), s.id(), null); // never answered
        open.add(silent);
        long sentAt = System.nanoTime();
        // the proxy counts a handshake before it connects into the sandbox: once the service holds it, it is counted
        await().atMost(Duration.ofSeconds(20)).until(() -> s.exec("cat /tmp/silent-held 2>/dev/null").stdout().strip().equals("1"));
        try (Socket over = handshake(at, host(ECHO, s.id()), s.id(), null)) {
          String refused = head(over);
          assertThat(refused).startsWith("HTTP/1.1 429");
          java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(refused);
          assertThat(length.find()).as(refused).isTrue();
          assertThat(new String(over.getInputStream().readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8))
              .contains(CAP + " upgraded");
        }
        // the never-answered handshake is answered 504 once its wait is over, and its slot comes back
        silent.setSoTimeout(60_000);
        assertThat(head(silent)).startsWith("HTTP/1.1 504");
        assertThat(Duration.ofNanos(System.nanoTime() - sentAt)).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(50));
        silent.close();
        open.remove(silent);
        Socket again = await().atMost(Duration.ofSeconds(20))
            .until(() -> switched(at, host(ECHO, s.id()), s.id()), java.util.Objects::nonNull);
        open.add(again);
        // the flooded client leaves: its slot comes back too
        flooded.close();
        open.remove(flooded);
        Socket third = await().atMost(Duration.ofSeconds(20))
            .until(() -> switched(at, host(ECHO, s.id()), s.id()), java.util.Objects::nonNull);
        open.add(third);
        assertThat(echo(third, "after the flood")).isEqualTo("after the flood");
      } finally {
        for (Socket sock : open) {
          sock.close();
        }
      }
    }
  }
}
