package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.EgressProbe;
import io.sandboxes.EgressProxy;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 25, item 3: a sandbox's {@code egressProxy} (SOCKS5) and the server-wide upstream proxy,
 * against the real server and real sandboxes. The SOCKS5 witness runs in an {@link ExternalHost}'s
 * namespace (an address "on the internet" this test made), records each CONNECT's target and
 * answers the tunneled request itself, naming itself, the target and the request line it got.
 * The HTTP upstream witness is a {@code CONNECT} proxy on this host's loopback (the operator's
 * choice, which a sandbox's own proxy could never be).
 */
@ExtendWith(SharedServer.class)
class EgressProxyTest {

  /**
   * A SOCKS5 server (RFC 1928, RFC 1929 when given a user): prints {@code connect ATYP HOST PORT}
   * per CONNECT, {@code badauth USER} for wrong credentials, then answers the tunneled HTTP
   * request with {@code socks TAG HOST REQUEST-LINE}. Arguments: address, port, tag, user, password.
   */
  static final String SOCKS_WITNESS = """
      import socket, struct, sys, threading
      addr, port, tag, user, pw = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
      s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      s.bind((addr, port)); s.listen(64)
      print("ready", flush=True)
      def recvn(c, n):
          b = b""
          while len(b) < n:
              x = c.recv(n - len(b))
              if not x:
                  raise EOFError()
              b += x
          return b
      def serve(c):
          try:
              c.settimeout(10)
              ver, n = recvn(c, 2)
              methods = recvn(c, n)
              want = 2 if user else 0
              if ver != 5 or want not in methods:
                  c.sendall(b"\\x05\\xff"); print("nomethod", flush=True); return
              c.sendall(bytes([5, want]))
              if want == 2:
                  recvn(c, 1); u = recvn(c, recvn(c, 1)[0]).decode(); p = recvn(c, recvn(c, 1)[0]).decode()
                  if u != user or p != pw:
                      c.sendall(b"\\x01\\x01"); print("badauth " + u, flush=True); return
                  c.sendall(b"\\x01\\x00")
              ver, cmd, _, atyp = recvn(c, 4)
              if atyp == 1:
                  host = socket.inet_ntoa(recvn(c, 4))
              elif atyp == 3:
                  host = recvn(c, recvn(c, 1)[0]).decode()
              else:
                  host = socket.inet_ntop(socket.AF_INET6, recvn(c, 16))
              dport = struct.unpack(">H", recvn(c, 2))[0]
              print("connect %d %s %d" % (atyp, host, dport), flush=True)
              c.sendall(b"\\x05\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00")
              head = b""
              while b"\\r\\n\\r\\n" not in head:
                  x = c.recv(65536)
                  if not x:
                      return
                  head += x
              body = ("socks %s %s %s\\n" % (tag, host, head.split(b"\\r\\n")[0].decode())).encode()
              c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body) + body)
          except Exception:
              pass
          finally:
              c.close()
      while True:
          c, _ = s.accept()
          threading.Thread(target=serve, args=(c,), daemon=True).start()
      """;

  @BeforeEach
  void enforced(LocalServer server) {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
  }

  /** What curl printed: the body, then the status, white space folded to one space ("000" alone for a failed connection). */
  private static String curl(LiveSandbox s, String url, String... extra) {
    return s.exec("curl -s -m 15 -w ' %{http_code}' " + String.join(" ", extra) + " '" + url + "'").stdout().strip().replaceAll("\\s+", " ");
  }

  static List<String> socks(ExternalHost host, int port, String tag, String user, String password) throws IOException {
    return host.run(SOCKS_WITNESS, host.address(), Integer.toString(port), tag, user, password);
  }

  @Test
  @DisplayName("a sandbox's egressProxy carries what its policy allows, by name as E2B does (ATYP domain), an address as an address; what the policy refuses never reaches the proxy; nothing goes around it")
  void tunnelsThroughSocks(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (ExternalHost outside = new ExternalHost()) {
      List<String> seen = socks(outside, 1080, "a", "", "");
      SandboxNetwork net = SandboxNetwork.allowOnly(p.allowedHost()).withEgressProxy(EgressProxy.of(outside.address() + ":1080"));
      try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(net))) {
        assertThat(curl(s, "http://" + p.allowedHost() + "/x?y=1"))
            .isEqualTo("socks a " + p.allowedHost() + " GET /x?y=1 HTTP/1.1 200");
        assertThat(curl(s, "http://" + p.allowedHost() + "/", "-p"))
            .as("CONNECT through the gateway, tunneled on").isEqualTo("socks a " + p.allowedHost() + " GET / HTTP/1.1 200");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
            assertThat(seen).containsExactly("connect 3 " + p.allowedHost() + " 80", "connect 3 " + p.allowedHost() + " 80"));
        assertThat(curl(s, "http://" + p.deniedHost() + "/")).as("the policy decides first").endsWith(" 403");
        assertThat(seen).hasSize(2);

        // internet access: an address goes to the proxy as the address checked; the direct path is closed
        s.network().update(SandboxNetwork.defaults().withAllowInternetAccess(true)
            .withEgressProxy(EgressProxy.of(outside.address() + ":1080")));
        assertThat(curl(s, outside.url())).isEqualTo("socks a " + outside.address() + " GET / HTTP/1.1 200");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(seen).contains("connect 1 " + outside.address() + " 8080"));
        assertThat(curl(s, outside.url(), "--noproxy '*'")).as("straight to the address, around the proxy").isEqualTo("000");
        assertThat(outside.connections).as("connections that reached the outside host's own responder").isEmpty();
      }
    }
  }

  @Test
  @DisplayName("RFC 1929 credentials: the right ones pass, a wrong password is a failed connection; info (raw, Java client) shows the address and user, never the password, nor do the logs")
  void credentials(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    String password = "pr0xy-pw-" + Long.toHexString(System.nanoTime());
    try (ExternalHost outside = new ExternalHost(); CapturedLogs logs = new CapturedLogs()) {
      List<String> seen = socks(outside, 1080, "auth", "alice", password);
      String address = outside.address() + ":1080";
      SandboxNetwork net = SandboxNetwork.allowOnly(p.allowedHost()).withEgressProxy(EgressProxy.of(address, "alice", password));
      try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(net))) {
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).isEqualTo("socks auth " + p.allowedHost() + " GET / HTTP/1.1 200");

        EgressProxy read = s.info().network().egressProxy();
        assertThat(read).isEqualTo(new EgressProxy(address, "alice", null));
        String raw = get(server, "/sandboxes/" + s.id());
        assertThat(raw).contains("\"egressProxy\":{\"address\":\"" + address + "\",\"username\":\"alice\"}").doesNotContain(password);

        s.network().update(SandboxNetwork.allowOnly(p.allowedHost()).withEgressProxy(EgressProxy.of(address, "alice", "wrong")));
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).as("refused credentials: a failed connection").isEqualTo("000");
        assertThat(curl(s, "http://" + p.allowedHost() + "/", "-p")).isEqualTo("000");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(seen).contains("badauth alice"));
        assertThat(get(server, "/v2/sandboxes/" + s.id() + "/logs")).doesNotContain(password).doesNotContain("wrong");
      }
      assertThat(logs.text()).doesNotContain(password);
    }
  }

  @Test
  @DisplayName("an update replaces the proxy live, and one without egressProxy stops tunneling (E2B's full replace)")
  void updateReplacesLive(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (ExternalHost outside = new ExternalHost()) {
      socks(outside, 1080, "first", "", "");
      socks(outside, 1081, "second", "", "");
      try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(
          SandboxNetwork.allowOnly(p.allowedHost()).withEgressProxy(EgressProxy.of(outside.address() + ":1080"))))) {
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).startsWith("socks first ");
        s.network().update(SandboxNetwork.allowOnly(p.allowedHost()).withEgressProxy(EgressProxy.of(outside.address() + ":1081")));
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).startsWith("socks second ");
        assertThat(s.info().network().egressProxy().address()).isEqualTo(outside.address() + ":1081");
        s.network().update(SandboxNetwork.allowOnly(p.allowedHost()));
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).isEqualTo("witness allowed 200");
        assertThat(s.info().network().egressProxy()).isNull();
      }
    }
  }

  @Test
  @DisplayName("an egressProxy cannot lead back in: the host's loopback, its addresses, a private address, another sandbox, a name for loopback are refused at create and on update, and the host's service is never reached")
  void proxyCannotLeadBackIn(LocalServer server, E2BApi e2b) throws Exception {
    try (EgressBoundaryTest.HostService service = new EgressBoundaryTest.HostService(); LiveSandbox other = e2b.create();
        LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(SandboxNetwork.defaults().withAllowInternetAccess(true)))) {
      EgressBoundaryTest.policy(server, other.id(), "{\"allow_internet_access\":true}");
      String otherIp = server.registry().find(other.id()).orElseThrow().networkAddress();
      assertThat(otherIp).isNotNull();
      List<String> addresses = new ArrayList<>(List.of("127.0.0.1", "localhost", "[::1]", "0.0.0.0", "10.1.2.3", "192.168.7.7",
          otherIp));
      addresses.addAll(EgressBoundaryTest.hostAddresses());
      for (String host : addresses) {
        String address = host + ":" + service.port();
        SandboxNetwork viaIt = SandboxNetwork.defaults().withAllowInternetAccess(true).withEgressProxy(EgressProxy.of(address, "u", "s3cret"));
        assertThatThrownBy(() -> e2b.create(SandboxSpec.defaults().withNetwork(viaIt))).as("create via " + address)
            .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(400))
            .hasMessageContaining("'egressProxy' " + address + " cannot be used").hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> s.network().update(viaIt)).as("update via " + address)
            .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(400));
      }
      assertThat(s.info().network().egressProxy()).as("a refused update leaves the policy as it was").isNull();
      assertThat(service.reached.get()).as("connections that reached the host's service").isZero();
    }
  }

  /** An HTTP proxy on this host's loopback: records each CONNECT line and its credentials, answers the tunneled request itself. */
  static final class ConnectWitness implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final List<String> seen = new CopyOnWriteArrayList<>();

    ConnectWitness() throws IOException {
      Thread.ofVirtual().start(() -> {
        while (!socket.isClosed()) {
          try {
            Socket c = socket.accept();
            Thread.ofVirtual().start(() -> serve(c));
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    private void serve(Socket c) {
      try (c; InputStream in = c.getInputStream(); OutputStream out = c.getOutputStream()) {
        c.setSoTimeout(10_000);
        String head = head(in);
        String line = head.lines().findFirst().orElse("");
        String auth = head.lines().filter(l -> l.toLowerCase().startsWith("proxy-authorization:")).findFirst().orElse("no auth");
        seen.add(line + " | " + auth);
        out.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        String inner = head(in).lines().findFirst().orElse("");
        byte[] body = ("upstream " + line.split(" ")[1] + " " + inner + "\n").getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
      } catch (IOException ignored) {
        // the gateway went away
      }
    }

    private static String head(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      int matched = 0;
      while (matched < 4) {
        int x = in.read();
        if (x < 0) {
          throw new IOException("closed");
        }
        b.write(x);
        matched = (x == "\r\n\r\n".charAt(matched)) ? matched + 1 : (x == '\r' ? 1 : 0);
      }
      return b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  @DisplayName("the server-wide upstream proxy (HTTP CONNECT, Basic credentials) carries what sandboxes may reach; the server's own witnesses are answered directly; a sandbox's own egressProxy goes first")
  void serverWideUpstream() throws Exception {
    try (ConnectWitness upstream = new ConnectWitness(); ExternalHost outside = new ExternalHost();
        LocalServer server = TestRuntime.builder().warmPool(0)
            .upstreamProxy("http://corp%20user:c0rp-pw@127.0.0.1:" + upstream.socket.getLocalPort()).build().start();
        E2BSandboxProvider c = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
            .apiKey(server.apiKey()).build()) {
      Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
      EgressProbe p = server.egressProbe();
      List<String> socks = socks(outside, 1080, "own", "", "");
      try (LiveSandbox s = c.api().create(SandboxSpec.defaults().withNetwork(SandboxNetwork.defaults().withAllowInternetAccess(true)))) {
        assertThat(curl(s, outside.url())).isEqualTo("upstream " + outside.address() + ":8080 GET / HTTP/1.1 200");
        String basic = java.util.Base64.getEncoder().encodeToString("corp user:c0rp-pw".getBytes(StandardCharsets.UTF_8));
        assertThat(upstream.seen).containsExactly("CONNECT " + outside.address() + ":8080 HTTP/1.1 | Proxy-Authorization: Basic " + basic);
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).as("the server's own witness").isEqualTo("witness allowed 200");
        assertThat(upstream.seen).hasSize(1);
        assertThat(outside.connections).isEmpty();

        s.network().update(SandboxNetwork.defaults().withAllowInternetAccess(true)
            .withEgressProxy(EgressProxy.of(outside.address() + ":1080")));
        assertThat(curl(s, outside.url())).isEqualTo("socks own " + outside.address() + " GET / HTTP/1.1 200");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(socks).containsExactly("connect 1 " + outside.address() + " 8080"));
        assertThat(upstream.seen).hasSize(1);
      }
    }
  }

  @Test
  @DisplayName("a server started again takes the sandbox back with its proxy's credentials (kept in its owner-only state file, never in its detail)")
  void credentialsSurviveRestart() throws Exception {
    String id = "proxy-restart-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    java.nio.file.Path state = java.nio.file.Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + java.util.UUID.randomUUID().toString().replace("-", "");
    String password = "kept-pw-" + Long.toHexString(System.nanoTime());
    String sandbox = null;
    try (ExternalHost outside = new ExternalHost()) {
      List<String> seen = socks(outside, 1080, "kept", "bob", password);
      try (LocalServer first = TestRuntime.builder().serverId(id).stateDir(state).apiKey(key).keepSandboxesOnClose(true).warmPool(0)
          .build().start(); E2BSandboxProvider c = client(first)) {
        Assumptions.assumeTrue(first.egressEnforced(), "egress needs root, nsenter and iptables");
        String allowed = first.egressProbe().allowedHost();
        LiveSandbox s = c.api().create(SandboxSpec.defaults().withNetwork(SandboxNetwork.allowOnly(allowed)
            .withEgressProxy(EgressProxy.of(outside.address() + ":1080", "bob", password))));
        sandbox = s.id();
        assertThat(curl(s, "http://" + allowed + "/")).startsWith("socks kept ");
      }
      try (LocalServer second = TestRuntime.builder().serverId(id).stateDir(state).apiKey(key).warmPool(0).build().start();
          E2BSandboxProvider c = client(second)) {
        LiveSandbox s = c.api().connect(sandbox);
        assertThat(curl(s, "http://" + second.egressProbe().allowedHost() + "/")).as("after the restart").startsWith("socks kept ");
        assertThat(get(second, "/sandboxes/" + sandbox)).doesNotContain(password);
        assertThat(seen).doesNotContain("badauth bob");
        assertThat(c.api().kill(sandbox)).isTrue();
        sandbox = null;
      }
    } finally {
      if (sandbox != null) {
        try (LocalServer cleanup = TestRuntime.builder().serverId(id).stateDir(state).apiKey(key).warmPool(0).build().start()) {
          cleanup.registry().kill(sandbox);
        }
      }
    }
  }

  private static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  private static String get(LocalServer server, String path) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return r.body();
    }
  }
}
