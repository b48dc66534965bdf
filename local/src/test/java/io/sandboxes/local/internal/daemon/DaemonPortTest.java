package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** TCP connections the daemon makes to its sandbox's loopback, in a real container of the base image. */
class DaemonPortTest {
  private static DaemonSandbox sandbox;
  private static DaemonConnection c;

  /**
   * Port 7501: says hello and half-closes, then records how many bytes came until the client's
   * end. Port 7502: appends what came, as a line, once the client's connection ends.
   */
  private static final String SERVER = """
      import socket, threading
      def serve(port, handle):
          s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
          s.bind(("127.0.0.1", port)); s.listen()
          while True:
              c, _ = s.accept()
              threading.Thread(target=handle, args=(c,), daemon=True).start()
      def read_all(c):
          data = b""
          while True:
              b = c.recv(65536)
              if not b: return data
              data += b
      def half(c):
          c.sendall(b"hello"); c.shutdown(socket.SHUT_WR)
          n = len(read_all(c))
          open("/tmp/half.txt", "w").write(str(n)); c.close()
      def until_gone(c):
          data = read_all(c)
          with open("/tmp/gone.txt", "ab") as f: f.write(data + b"\\n")
          c.close()
      threading.Thread(target=serve, args=(7501, half), daemon=True).start()
      serve(7502, until_gone)
      """;

  @BeforeAll
  static void up() throws Exception {
    sandbox = DaemonSandbox.start();
    c = sandbox.conn();
    c.writeFile("/tmp/srv.py", null, new java.io.ByteArrayInputStream(SERVER.getBytes(StandardCharsets.UTF_8)), null);
    sandbox.sh("(nohup python3 /tmp/srv.py >/dev/null 2>&1 &)");
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
      c.connectPort(7502).close();
      return true;
    });
  }

  @AfterAll
  static void down() throws Exception {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @DisplayName("ports out of range are refused on both sides: by the host before sending, and by the daemon")
  void portRange() throws Exception {
    assertThatThrownBy(() -> c.connectPort(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
    assertThatThrownBy(() -> c.connectPort(65536)).isInstanceOf(IllegalArgumentException.class);
    // what a host that skipped its own check would get
    assertThatThrownBy(() -> c.frames().call(Wire.TCP_CONNECT, new Wire.Out().u16(0).toBytes(), DaemonConnection.ANSWER))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.INVALID));
    assertThatThrownBy(() -> c.frames().call(Wire.TCP_CONNECT, new Wire.Out().u16(7502).u8(0).toBytes(), DaemonConnection.ANSWER))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.PROTOCOL));
    c.ping(); // the connection is still fine
  }

  @Test
  @DisplayName("nothing listening is REFUSED (ECONNREFUSED), at once")
  void refused() throws Exception {
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> c.connectPort(7599)).isInstanceOfSatisfying(DaemonException.class, e -> {
      assertThat(e.kind()).isEqualTo(DaemonException.Kind.REFUSED);
      assertThat(e.errno()).isEqualTo(111);
    });
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  @DisplayName("each direction half-closes on its own: the port's end arrives while the host still sends, then both end with OK")
  void halfCloseEachWay() throws Exception {
    try (PortStream ps = c.connectPort(7501)) {
      assertThat(ps.family()).isEqualTo(4);
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      byte[] b;
      while ((b = ps.read()) != null) {
        got.writeBytes(b);
      }
      assertThat(got.toString(StandardCharsets.UTF_8)).isEqualTo("hello");
      byte[] up = new byte[3 * 1024 * 1024 + 1]; // more than a window, after the port stopped sending
      ps.write(up, 0, up.length);
      ps.shutdownOutput();
      ps.awaitEnd();
    }
    await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
        .until(() -> sandbox.sh("cat /tmp/half.txt").equals(Integer.toString(3 * 1024 * 1024 + 1)));
  }

  @Test
  @DisplayName("closing the stream early (CANCEL) closes the connection inside the sandbox")
  void cancelCloses() throws Exception {
    // connections of the set-up's readiness check end here too: this one is known by its marker
    String marker = "before the cancel " + java.util.UUID.randomUUID();
    PortStream ps = c.connectPort(7502);
    byte[] data = marker.getBytes(StandardCharsets.UTF_8);
    ps.write(data, 0, data.length);
    // still open while the stream is: nothing recorded for half a second (the bound is for the
    // looks, which a loaded machine has made slow, not for the hold)
    await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(30))
        .failFast("the daemon connection the stream was on ended",
            () -> assertThat(c.isOpen()).as("open; closed because: %s", c.closeReason()).isTrue())
        .until(() -> !sandbox.sh("cat /tmp/gone.txt 2>/dev/null; true").contains(marker));
    ps.close();
    await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
        .until(() -> sandbox.sh("cat /tmp/gone.txt").lines().anyMatch(marker::equals));
    assertThatThrownBy(ps::read).isInstanceOf(DaemonException.class);
  }
}
