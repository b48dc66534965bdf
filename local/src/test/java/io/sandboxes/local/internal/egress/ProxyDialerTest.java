package io.sandboxes.local.internal.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The dialer's handshakes against real proxies on loopback that answer as a failing proxy would:
 * every failure is an error naming the proxy and why, never a connection and never the password.
 */
class ProxyDialerTest {

  /** A proxy on loopback that runs {@code script} on each connection and counts them. */
  private static final class Scripted implements AutoCloseable {
    interface Script {
      void run(DataInputStream in, OutputStream out) throws IOException;
    }

    final ServerSocket socket = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
    final AtomicInteger connections = new AtomicInteger();

    Scripted(Script script) throws IOException {
      Thread.ofVirtual().start(() -> {
        while (!socket.isClosed()) {
          try (Socket c = socket.accept()) {
            connections.incrementAndGet();
            script.run(new DataInputStream(c.getInputStream()), c.getOutputStream());
          } catch (IOException ignored) {
            // next
          }
        }
      });
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  private static ProxyDialer socks(Scripted p, String user, String password) {
    return new ProxyDialer(new UpstreamProxy(UpstreamProxy.Kind.SOCKS5, "127.0.0.1", p.socket.getLocalPort(), user, password, true),
        a -> null);
  }

  @Test
  @DisplayName("SOCKS5: refused credentials and a refused CONNECT are errors naming why; the password is in no message")
  void socksRefusals() throws Exception {
    try (Scripted badAuth = new Scripted((in, out) -> {
      in.readFully(new byte[3]);
      out.write(new byte[] {5, 2});
      in.readFully(new byte[2 + "u".length() + 1 + "secret-1".length()]);
      out.write(new byte[] {1, 1});
    })) {
      assertThatThrownBy(() -> socks(badAuth, "u", "secret-1").dial("example.test", 80, List.of()))
          .hasMessage("the socks5 proxy 127.0.0.1:" + badAuth.socket.getLocalPort() + " as u refused the credentials")
          .hasMessageNotContaining("secret-1");
    }
    try (Scripted refused = new Scripted((in, out) -> {
      in.readFully(new byte[3]);
      out.write(new byte[] {5, 0});
      in.readFully(new byte[4 + 1 + "example.test".length() + 2]);
      out.write(new byte[] {5, 5, 0, 1, 0, 0, 0, 0, 0, 0});
    })) {
      assertThatThrownBy(() -> socks(refused, null, null).dial("example.test", 80, List.of()))
          .hasMessageEndingWith("refused example.test:80: connection refused");
    }
    try (Scripted noMethod = new Scripted((in, out) -> {
      in.readFully(new byte[3]);
      out.write(new byte[] {5, (byte) 0xff});
    })) {
      assertThatThrownBy(() -> socks(noMethod, null, null).dial("example.test", 80, List.of()))
          .hasMessageEndingWith("accepts no unauthenticated connection");
    }
  }

  @Test
  @DisplayName("HTTP CONNECT: a 407 is an error with the status line, not the credentials; what follows a 200 is the destination's")
  void httpConnect() throws Exception {
    String[] head = new String[1];
    try (Scripted proxy = new Scripted((in, out) -> {
      StringBuilder b = new StringBuilder();
      while (!b.toString().endsWith("\r\n\r\n")) {
        b.append((char) in.readUnsignedByte());
      }
      head[0] = b.toString();
      out.write("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    })) {
      ProxyDialer d = new ProxyDialer(UpstreamProxy.parse("http://corp:pw%40x@127.0.0.1:" + proxy.socket.getLocalPort()), a -> null);
      assertThatThrownBy(() -> d.dial("example.test", 443, List.of()))
          .hasMessageEndingWith("refused CONNECT example.test:443: HTTP/1.1 407 Proxy Authentication Required")
          .hasMessageNotContaining("pw@x");
      assertThat(head[0]).startsWith("CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n")
          .contains("Proxy-Authorization: Basic " + java.util.Base64.getEncoder().encodeToString("corp:pw@x".getBytes(StandardCharsets.UTF_8)));
    }
    try (Scripted proxy = new Scripted((in, out) -> {
      while (in.readUnsignedByte() != '\n' || in.readUnsignedByte() != '\r') {
        // to the blank line
      }
      in.readUnsignedByte();
      out.write("HTTP/1.1 200 Connection established\r\n\r\ndestination".getBytes(StandardCharsets.ISO_8859_1));
    })) {
      ProxyDialer d = new ProxyDialer(UpstreamProxy.parse("http://127.0.0.1:" + proxy.socket.getLocalPort()), a -> null);
      try (Socket s = d.dial("example.test", 80, List.of())) {
        assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1)).isEqualTo("destination");
      }
    }
  }

  @Test
  @DisplayName("a proxy at an address the refusal names is never connected to")
  void refusedProxyAddressNotDialed() throws Exception {
    try (Scripted proxy = new Scripted((in, out) -> out.write(new byte[] {5, 0}))) {
      ProxyDialer d = new ProxyDialer(UpstreamProxy.socks5("127.0.0.1:" + proxy.socket.getLocalPort(), null, null),
          a -> a.isLoopbackAddress() ? "a loopback address" : null);
      assertThatThrownBy(() -> d.dial("example.test", 80, List.of())).hasMessageEndingWith("is at 127.0.0.1, a loopback address");
      assertThat(proxy.connections.get()).isZero();
    }
  }

  @Test
  @DisplayName("the upstream URL: schemes, default ports, percent-encoded credentials; toString never shows the password; bad URLs say what is wrong")
  void upstreamUrls() {
    UpstreamProxy p = UpstreamProxy.parse("socks5h://us%20er:p%3Ass@proxy.corp");
    assertThat(p).isEqualTo(new UpstreamProxy(UpstreamProxy.Kind.SOCKS5, "proxy.corp", 1080, "us er", "p:ss", true));
    assertThat(p.toString()).isEqualTo("socks5 proxy proxy.corp:1080 as us er");
    assertThat(UpstreamProxy.parse("socks5://[::1]:9").remoteNames()).isFalse();
    assertThat(UpstreamProxy.parse("http://proxy.corp").port()).isEqualTo(3128);
    assertThatThrownBy(() -> UpstreamProxy.parse("https://proxy.corp:443")).hasMessageContaining("socks5, socks5h or http");
    assertThatThrownBy(() -> UpstreamProxy.parse("http://proxy.corp:3128/path")).hasMessageContaining("nothing more");
    assertThatThrownBy(() -> UpstreamProxy.socks5("::1:1080", null, null)).hasMessageContaining("in brackets");
  }
}
