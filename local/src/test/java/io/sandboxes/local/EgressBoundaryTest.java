package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.EgressProbe;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The egress boundary, attacked from inside real sandboxes (root there through sudo): names and
 * addresses that lead back to the host, to its loopback, to other sandboxes; a namespace firewall
 * taken away; another sandbox's address worn; raw sockets; a flood of gateway connections. The
 * targets are this test's own: a listener on every address of this host (a developer's service),
 * and an {@link ExternalHost} in a network namespace the test made.
 */
@ExtendWith(SharedServer.class)
class EgressBoundaryTest {

  /** A developer's service on every address of this host (a database, another agent): nothing in a sandbox may reach it. */
  static final class HostService implements AutoCloseable {
    final ServerSocket socket;
    final AtomicInteger reached = new AtomicInteger();

    HostService() throws IOException {
      socket = new ServerSocket(0, 200, InetAddress.getByName("0.0.0.0"));
      Thread.ofVirtual().start(() -> {
        while (!socket.isClosed()) {
          try {
            Socket c = socket.accept();
            reached.incrementAndGet();
            Thread.ofVirtual().start(() -> {
              try (c; OutputStream out = c.getOutputStream()) {
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhost\n".getBytes(StandardCharsets.US_ASCII));
              } catch (IOException ignored) {
                // the client went away
              }
            });
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    int port() {
      return socket.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @BeforeEach
  void enforced(LocalServer server) {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
  }

  static void policy(LocalServer server, String sandboxId, String json) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId + "/network"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
  }

  /** Runs a command as root in the sandbox (as a process started as root, which gVisor's sudo cannot become). */
  private static ExecResult asRoot(LiveSandbox s, String command) {
    return s.exec(command, ExecOptions.defaults().withUser("root"));
  }

  /**
   * curl's status code for {@code url}, as root, through the gateway (every name and address,
   * loopback's too: the sandbox's {@code NO_PROXY} is dropped) or past it.
   */
  private static String code(LiveSandbox s, String url, boolean viaProxy, String... extra) {
    ExecResult r = asRoot(s, (viaProxy ? "env -u NO_PROXY -u no_proxy " : "") + "curl -s -o /dev/null -m 15 -w '%{http_code}' "
        + (viaProxy ? "" : "--noproxy '*' ") + String.join(" ", extra) + " '" + url + "'");
    return r.stdout().strip();
  }

  /**
   * This host's IPv4 addresses other than loopback: its interfaces, every Docker bridge's gateway
   * among them. Not the host ends of the outside hosts tests make ({@link ExternalHost}, in
   * 198.18.0.0/15): another test class's comes and goes while this one runs, and once gone it is
   * an outside address, which the gateway tries and cannot reach (a gVisor pass saw "000" there).
   */
  static List<String> hostAddresses() throws IOException {
    List<String> found = new ArrayList<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      for (InetAddress a : Collections.list(nif.getInetAddresses())) {
        byte[] b = a.getAddress();
        boolean testsOutside = b.length == 4 && (b[0] & 0xff) == 198 && ((b[1] & 0xff) == 18 || (b[1] & 0xff) == 19);
        if (a instanceof Inet4Address && !a.isLoopbackAddress() && !testsOutside) {
          found.add(a.getHostAddress());
        }
      }
    }
    return found;
  }

  static long pidOf(LocalServer server, String sandboxId) {
    String container = server.registry().find(sandboxId).orElseThrow().instanceId();
    try (DockerRuntime docker = DockerRuntime.connect()) {
      return docker.client().inspectContainerCmd(container).exec().getState().getPidLong();
    }
  }

  /** Runs a command on the host in the sandbox's network namespace: what the sandbox itself could do if it could change it. */
  private static void inNamespace(long pid, String command) throws Exception {
    Process p = new ProcessBuilder("nsenter", "-t", Long.toString(pid), "-n", "sh", "-c", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
  }

  @Test
  @DisplayName("with internet access on, nothing of the host is reached: not its services by any name or address through the gateway (localhost, 127.1, ::1, a mapped ::ffff:127.0.0.1, 0.0.0.0, its own addresses), not the server's own API, not directly")
  void hostUnreachable(LocalServer server, E2BApi e2b) throws Exception {
    try (HostService service = new HostService(); ExternalHost external = new ExternalHost(); LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allow_internet_access\":true}");
      // the network works: the outside host is reached both ways
      assertThat(code(s, external.url(), true)).isEqualTo("200");
      assertThat(code(s, external.url(), false)).isEqualTo("200");

      int port = service.port();
      List<String> viaGateway = new ArrayList<>(List.of("localhost", "127.0.0.1", "127.1", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0",
          "localhost."));
      viaGateway.addAll(hostAddresses());
      for (String host : viaGateway) {
        String url = "http://" + host + ":" + port + "/";
        assertThat(code(s, url, true)).as("through the gateway: " + url).isEqualTo("403");
        assertThat(code(s, url, true, "-p")).as("CONNECT through the gateway: " + url).isEqualTo("000");
      }
      for (String host : hostAddresses()) {
        assertThat(code(s, "http://" + host + ":" + port + "/", false)).as("directly: " + host).isEqualTo("000");
      }
      assertThat(code(s, "http://localhost:" + server.apiUrl().getPort() + "/health", true)).as("the server's API").isEqualTo("403");
      assertThat(code(s, "http://localhost:" + server.sandboxUrl().getPort() + "/health", true)).as("the envd front").isEqualTo("403");
      assertThat(service.reached.get()).as("connections that reached the host's service").isZero();
    }
  }

  @Test
  @DisplayName("another sandbox is out of reach, even with internet access on: its address through the gateway and directly, and its port forwarded to this host's loopback")
  void otherSandboxesUnreachable(LocalServer server, E2BApi e2b) throws Exception {
    try (ExternalHost external = new ExternalHost(); LiveSandbox target = e2b.create(); LiveSandbox s = e2b.create()) {
      policy(server, target.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      String targetIp = server.registry().find(target.id()).orElseThrow().networkAddress();
      assertThat(targetIp).isNotNull();
      target.exec("setsid nohup python3 -m http.server 8000 --bind 0.0.0.0 </dev/null >/dev/null 2>&1 &");
      await().atMost(Duration.ofSeconds(20)).until(() ->
          target.exec("curl -s -o /dev/null -w '%{http_code}' --noproxy '*' http://127.0.0.1:8000/").stdout().equals("200"));

      policy(server, s.id(), "{\"allow_internet_access\":true}");
      assertThat(code(s, external.url(), false)).isEqualTo("200");
      assertThat(code(s, "http://" + targetIp + ":8000/", true)).as("through the gateway").isEqualTo("403");
      assertThat(code(s, "http://" + targetIp + ":8000/", true, "-p")).as("CONNECT through the gateway").isEqualTo("000");
      assertThat(code(s, "http://" + targetIp + ":8000/", false)).as("directly").isEqualTo("000");

      java.net.URI forwarded = server.forward(target.id(), 8000);
      try (HttpClient http = HttpClient.newHttpClient()) {
        assertThat(http.send(HttpRequest.newBuilder(forwarded).build(), HttpResponse.BodyHandlers.discarding()).statusCode())
            .as("this host reaches the forward").isEqualTo(200);
      }
      for (String host : List.of("127.0.0.1", "localhost")) {
        assertThat(code(s, "http://" + host + ":" + forwarded.getPort() + "/", true)).as("the forward, as " + host).isEqualTo("403");
      }
    }
  }

  @Test
  @DisplayName("the host's firewall holds when the sandbox's own is gone: with its namespace's rules flushed, a sandbox allowed one name still reaches no address directly, and the host's services stay out of reach")
  void hostSideHoldsWithoutNamespaceFirewall(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (HostService service = new HostService(); ExternalHost external = new ExternalHost(); LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      inNamespace(pidOf(server, s.id()), "iptables -P OUTPUT ACCEPT && iptables -P INPUT ACCEPT && iptables -F");
      assertThat(code(s, "http://" + p.allowedHost() + "/", true)).as("the allowed name, through the gateway").isEqualTo("200");
      assertThat(code(s, external.url(), false)).as("an address the policy does not name").isEqualTo("000");
      for (String host : hostAddresses()) {
        assertThat(code(s, "http://" + host + ":" + service.port() + "/", false)).as("the host at " + host).isEqualTo("000");
      }
      assertThat(external.connections).isEmpty();
      assertThat(service.reached.get()).isZero();

      // and what the policy does name is let through by the host, namespace rules or not
      policy(server, s.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      inNamespace(pidOf(server, s.id()), "iptables -P OUTPUT ACCEPT && iptables -P INPUT ACCEPT && iptables -F");
      assertThat(code(s, external.url(), false)).isEqualTo("200");
    }
  }

  @Test
  @DisplayName("wearing another sandbox's address gets nothing through: a sandbox given a second address (another's, whose policy allows the outside host) is still judged as itself by the host")
  void spoofedAddress(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (ExternalHost external = new ExternalHost(); LiveSandbox victim = e2b.create(); LiveSandbox s = e2b.create()) {
      policy(server, victim.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      String victimIp = server.registry().find(victim.id()).orElseThrow().networkAddress();
      assertThat(code(victim, external.url(), false)).isEqualTo("200");
      int before = external.packets();

      // what root with NET_ADMIN and NET_RAW could do: take the victim's address, lift the namespace's rules
      inNamespace(pidOf(server, s.id()), "ip addr add " + victimIp + "/32 dev eth0 && iptables -P OUTPUT ACCEPT && iptables -F");
      assertThat(code(s, external.url(), false, "--interface", victimIp)).isEqualTo("000");
      assertThat(external.packets()).as("packets that reached the outside host from the impostor").isEqualTo(before);
    }
  }

  @Test
  @DisplayName("root in a sandbox has no raw or packet sockets and no capability to change its network: NET_RAW, NET_ADMIN and MKNOD are not in its bounding set")
  void noRawSockets(E2BApi e2b) {
    try (LiveSandbox s = e2b.create()) {
      for (String socket : List.of("socket.AF_PACKET, socket.SOCK_RAW", "socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP",
          "socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW")) {
        ExecResult r = asRoot(s, "python3 -c 'import socket; socket.socket(" + socket + ")'");
        assertThat(r.exitCode()).as(socket).isNotZero();
        // runc: no capability for it; gVisor: no such family at all
        assertThat(r.stderr()).as(socket).containsAnyOf("Operation not permitted", "Address family not supported");
      }
      long bounding = Long.parseLong(asRoot(s, "grep CapBnd /proc/self/status | cut -f2").stdout().strip(), 16);
      assertThat(bounding & (1L << 13)).as("CAP_NET_RAW").isZero();
      assertThat(bounding & (1L << 12)).as("CAP_NET_ADMIN").isZero();
      assertThat(bounding & (1L << 27)).as("CAP_MKNOD").isZero();
      if (!TestRuntime.gvisor()) { // gVisor sets no_new_privs: sudo cannot work there at all
        assertThat(s.exec("sudo -n id -u 2>&1").stdout()).as("sudo still works, quietly").isEqualTo("0\n");
      }
    }
  }

  @Test
  @DisplayName("one sandbox holds at most 256 gateway connections at once: a flood of idle ones is cut off past that, and the gateway still serves it afterwards")
  void gatewayConnectionCap(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      String flood = """
          import os, socket, time
          host, port = os.environ["HTTP_PROXY"][len("http://"):].split(":")
          socks = [socket.create_connection((host, int(port)), timeout=5) for _ in range(400)]
          time.sleep(2)
          alive = told = 0
          for c in socks:
              c.setblocking(False)
              try:
                  told += 1 if c.recv(64).startswith(b"HTTP/1.1 429") else 0
              except BlockingIOError:
                  alive += 1
              except OSError:
                  pass
          print(alive, told)
          """;
      ExecResult r = s.exec("python3 -c '" + flood.replace("'", "'\\''") + "'");
      assertThat(r.exitCode()).as(r.stderr()).isZero();
      String[] counts = r.stdout().strip().split(" ");
      assertThat(Integer.parseInt(counts[0])).as("connections the gateway kept open").isBetween(1, 256);
      assertThat(Integer.parseInt(counts[1])).as("connections told 429 Too many").isGreaterThanOrEqualTo(400 - 256);
      assertThat(code(s, "http://" + p.allowedHost() + "/", true)).isEqualTo("200");
    }
  }

  @Test
  @DisplayName("a template build's RUN step reaches the outside but nothing of the host (any of its addresses, the builds' own gateway among them) and no private range")
  void buildStepsKeptFromTheHost(LocalServer server) throws Exception {
    try (HostService service = new HostService(); ExternalHost external = new ExternalHost()) {
      StringBuilder script = new StringBuilder("probe() { printf '%s=%s\\n' \"$1\" \"$(curl -s -o /dev/null -m 4 -w '%{http_code}' \"$2\")\"; }; ");
      script.append("probe external ").append(external.url()).append("; ");
      List<String> hosts = hostAddresses();
      for (String host : hosts) {
        script.append("probe host-").append(host).append(" http://").append(host).append(':').append(service.port()).append("/; ");
      }
      script.append("probe loopback http://127.0.0.1:").append(service.port()).append("/; true");
      TemplateBuildTest.Requested r = TemplateBuildTest.request(server, TemplateBuildTest.unique("tpl-net"));
      com.fasterxml.jackson.databind.node.ObjectNode body = io.sandboxes.e2b.internal.Json.object().put("fromTemplate", "base");
      body.putArray("steps").add(TemplateBuildTest.step("RUN", script + " # " + java.util.UUID.randomUUID()));
      List<com.fasterxml.jackson.databind.JsonNode> log = new ArrayList<>();
      com.fasterxml.jackson.databind.JsonNode done = TemplateBuildTest.build(server, r, body, log);
      assertThat(done.path("status").asText()).as("%s", done).isEqualTo("ready");
      List<String> lines = TemplateBuildTest.messages(log);
      assertThat(lines).contains("[builder 1/1] [stdout]: external=200");
      for (String host : hosts) {
        assertThat(lines).contains("[builder 1/1] [stdout]: host-" + host + "=000");
      }
      assertThat(service.reached.get()).as("connections from the build that reached the host's service").isZero();
      TemplateBuildTest.call(server, "DELETE", "/templates/" + r.templateId(), null);
    }
  }

  @Test
  @DisplayName("a sandbox's host chain and dispatch entries exist while it is on the network and go with it")
  void hostChainsGoWithTheSandbox(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    LiveSandbox s = e2b.create();
    String chain;
    try {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      String ip = server.registry().find(s.id()).orElseThrow().networkAddress();
      long v = 0;
      for (String part : ip.split("\\.")) {
        v = (v << 8) | Integer.parseInt(part);
      }
      chain = String.format("SBX-%08X", v);
      assertThat(hostRules()).contains("-N " + chain).anyMatch(l -> l.startsWith("-A SANDBOXES-IN -s " + ip + "/32") && l.endsWith(chain))
          .anyMatch(l -> l.startsWith("-A SANDBOXES-FWD -s " + ip + "/32") && l.endsWith(chain));
      // the chain goes with the kill, not with Docker's removal of the container, which may wait in a queue
      try (AutoCloseable held = server.registry().holdRemovalsForTesting(Duration.ofSeconds(60))) {
        s.kill();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(hostRules()).noneMatch(l -> l.contains(chain)));
      }
    } finally {
      s.kill();
    }
  }

  private static List<String> hostRules() throws Exception {
    Process p = new ProcessBuilder("iptables", "-w", "10", "-S").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return List.of(out.split("\n"));
  }

  @Test
  @DisplayName("a late detach for the container that held an address before leaves the sandbox that holds it now alone: "
      + "its gateway registration and host firewall entries stay (Docker gives a removed container's address to the next one at once)")
  void lateDetachOfThePreviousHolder(LocalServer server, E2BApi e2b) throws Exception {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
    EgressProbe p = server.egressProbe();
    try (ExternalHost external = new ExternalHost(); LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\",\"" + external.address() + "/32\"]}");
      String ip = server.registry().find(s.id()).orElseThrow().networkAddress();
      String viaGateway = "curl -s -o /dev/null -m 15 -w '%{http_code}' http://" + p.allowedHost() + "/";
      String direct = "curl -s -o /dev/null -m 15 -w '%{http_code}' --noproxy '*' " + external.url();
      assertThat(s.exec(viaGateway).stdout()).isEqualTo("200");
      assertThat(s.exec(direct).stdout()).isEqualTo("200");
      // what the removal of the address's previous holder does when it finishes after this sandbox took the address
      server.network().orElseThrow().detach(ip, "the-previous-holder-of-" + ip);
      assertThat(s.exec(viaGateway).stdout()).as("through the gateway").isEqualTo("200");
      assertThat(s.exec(direct).stdout()).as("directly, past the host's chains").isEqualTo("200");
    }
  }
}
