package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.EgressProbe;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A sandbox whose policy allows nothing starts on Docker's network {@code none} and joins the
 * sandbox network only when a policy allows something, firewall first. Real server, real Docker,
 * real HTTP; the only traffic goes to this test's own listener on the sandbox network's gateway
 * (a host-local address) and the server's witnesses.
 */
class NoNetworkStartTest {

  private static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  private static void policy(LocalServer server, String sandboxId, String json) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId + "/network"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
  }

  private static String create(LocalServer server, String extra) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\",\"timeout\":300" + extra + "}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
      return io.sandboxes.e2b.internal.Json.parse(r.body().getBytes(StandardCharsets.UTF_8)).get("sandboxID").asText();
    }
  }

  /** The Docker networks a container is on now. */
  /** A server that keeps its sandboxes when closed, so that the next one with its id and state takes them back. */
  private static LocalServer.Builder restartable(String serverId, Path state) {
    return LocalServer.builder().serverId(serverId).stateDir(state).apiKey("e2b_" + UUID.randomUUID().toString().replace("-", ""))
        .keepSandboxesOnClose(true).warmPool(0);
  }

  private static void removeContainersOf(String serverId) {
    try (DockerRuntime docker = DockerRuntime.connect()) {
      docker.listOurs().stream().filter(k -> serverId.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)))
          .forEach(k -> docker.remove(k.getId()));
    }
  }

  private static Set<String> networks(DockerRuntime docker, String containerId) {
    return docker.client().inspectContainerCmd(containerId).exec().getNetworkSettings().getNetworks().keySet();
  }

  private static String curl(LiveSandbox s, String url) {
    return s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' " + url).stdout().strip();
  }

  private static int lines(LiveSandbox s, String file) {
    String out = s.exec("cat " + file + " 2>/dev/null | wc -l").stdout().strip();
    return Integer.parseInt(out);
  }

  @Test
  @DisplayName("deny-all starts on network none (hostname resolvable, one hosts line); an allow joins the network with the firewall already in place: a sandbox hammering a raw IP never reaches it before that IP is allowed")
  void joinsOnlyWhenAllowedFirewallFirst() throws Exception {
    try (LocalServer server = LocalServer.builder().warmPool(0).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
      EgressProbe p = server.egressProbe();
      try (ExternalHost witness = new ExternalHost(); LiveSandbox s = c.api().create()) {
        LocalSandbox local = server.registry().find(s.id()).orElseThrow();
        assertThat(networks(docker, local.instanceId())).containsExactly("none");
        assertThat(local.networkAddress()).isNull();
        assertThat(s.exec("hostname; grep -c \"$(hostname)\" /etc/hosts; sudo -n true 2>&1; echo sudo=$?").stdout())
            .isEqualTo(s.id() + "\n1\nsudo=0\n");

        // from before the allow on: try the test's listener directly, over and over, counting tries
        // (a dropped try gives up after 0.2 s; on "none" each fails at once)
        s.exec("setsid nohup bash -c 'while :; do echo >> /tmp/tries; timeout 0.2 bash -c \"echo > /dev/tcp/" + witness.hostPort()
            + "\" 2>/dev/null && echo >> /tmp/hits; sleep 0.005; done' </dev/null >/dev/null 2>&1 &");
        await().atMost(Duration.ofSeconds(20)).until(() -> lines(s, "/tmp/tries") >= 20);

        // an allow of something else (a name, through the gateway): the sandbox joins the network
        policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
        assertThat(networks(docker, local.instanceId())).containsExactly("sandboxes-egress");
        String ip = local.networkAddress();
        assertThat(ip).isNotNull();
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).isEqualTo("200");
        int tried = lines(s, "/tmp/tries");
        await().atMost(Duration.ofSeconds(20)).until(() -> lines(s, "/tmp/tries") >= tried + 10);
        assertThat(witness.connections).as("nothing reached the listener: the firewall was in place before the join").isEmpty();
        assertThat(lines(s, "/tmp/hits")).isZero();
        // /etc/hosts as a sandbox's that started on the network: the hostname once, at its address
        assertThat(s.exec("grep \"$(hostname)\" /etc/hosts").stdout()).isEqualTo(ip + "\t" + s.id() + "\n");
        assertThat(s.exec("sudo -n true 2>&1; echo sudo=$?").stdout()).isEqualTo("sudo=0\n");

        // the loop would have seen it: once the listener's address is allowed, it gets through
        policy(server, s.id(), "{\"allowOut\":[\"" + witness.address() + "/32\"]}");
        await().atMost(Duration.ofSeconds(20)).until(() -> !witness.connections.isEmpty());
        assertThat(local.networkAddress()).as("a second allow keeps the address").isEqualTo(ip);

        // deny-all again: still on the network, with nothing reachable
        policy(server, s.id(), "{}");
        // connections made before the rewrite may still wait in the listener's backlog (a loaded
        // machine has recorded two more after the policy answered): count once the count stays put
        int[] seen = {-1};
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(700)).until(() -> {
          int now = witness.connections.size();
          boolean still = now == seen[0];
          seen[0] = now;
          return still;
        });
        int hits = witness.connections.size();
        int before = lines(s, "/tmp/tries");
        await().atMost(Duration.ofSeconds(20)).until(() -> lines(s, "/tmp/tries") >= before + 10);
        assertThat(witness.connections.size()).as("connections after deny-all").isEqualTo(hits);
        assertThat(curl(s, "http://" + p.allowedHost() + "/")).isEqualTo("000");
      }
    }
  }

  @Test
  @DisplayName("an allow-list at create joins before create answers; an explicit deny stays on none")
  void allowAtCreateJoinsBeforeAnswer() throws Exception {
    try (LocalServer server = LocalServer.builder().warmPool(0).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
      EgressProbe p = server.egressProbe();
      String id = create(server, ",\"network\":{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      LocalSandbox local = server.registry().find(id).orElseThrow();
      assertThat(networks(docker, local.instanceId())).containsExactly("sandboxes-egress");
      LiveSandbox s = c.api().connect(id);
      assertThat(curl(s, "http://" + p.allowedHost() + "/")).isEqualTo("200");
      assertThat(s.exec("grep -c \"$(hostname)\" /etc/hosts").stdout()).isEqualTo("1\n");
      String closed = create(server, ",\"allow_internet_access\":false");
      assertThat(networks(docker, server.registry().find(closed).orElseThrow().instanceId())).containsExactly("none");
      c.api().kill(id);
      c.api().kill(closed);
    }
  }

  @Test
  @DisplayName("restart: a sandbox still on none, one that joined at create, one that joined later and one whose allow never made it to the network are all taken back under their policies")
  void restartAdoptsNoneAndJoined() throws Exception {
    String serverId = "nonet-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    LocalServer.Builder b = restartable(serverId, state);
    try (DockerRuntime docker = DockerRuntime.connect(); ExternalHost external = new ExternalHost()) {
      String none;
      String atCreate;
      String later;
      String unfinished;
      String allowed = external.address() + "/32";
      try (LocalServer first = b.build().start(); E2BSandboxProvider c = client(first)) {
        Assumptions.assumeTrue(first.egressEnforced(), "egress needs root, nsenter and iptables");
        none = create(first, "");
        atCreate = create(first, ",\"network\":{\"allowOut\":[\"" + allowed + "\"]}");
        later = create(first, "");
        policy(first, later, "{\"allowOut\":[\"" + allowed + "\"]}");
        unfinished = create(first, "");
      }
      // as if the server had stopped after recording an allow and before the join
      Path f = state.resolve(unfinished + ".json");
      var node = (com.fasterxml.jackson.databind.node.ObjectNode) io.sandboxes.e2b.internal.Json.parse(Files.readAllBytes(f));
      node.set("network", io.sandboxes.e2b.internal.Json.parse(("{\"allowOut\":[\"" + allowed + "\"]}").getBytes(StandardCharsets.UTF_8)));
      Files.write(f, io.sandboxes.e2b.internal.Json.bytes(node));

      try (LocalServer again = b.keepSandboxesOnClose(false).build().start(); E2BSandboxProvider c = client(again)) {
        LocalSandbox n = again.registry().find(none).orElseThrow();
        assertThat(n.networkAddress()).isNull();
        assertThat(networks(docker, n.instanceId())).containsExactly("none");
        String raw = "--noproxy '*' " + external.url();
        assertThat(curl(c.api().connect(none), raw)).isEqualTo("000");
        for (String id : List.of(atCreate, later, unfinished)) {
          LocalSandbox s = again.registry().find(id).orElseThrow();
          assertThat(networks(docker, s.instanceId())).as(id).containsExactly("sandboxes-egress");
          assertThat(s.networkAddress()).as(id).isNotNull();
          assertThat(curl(c.api().connect(id), raw)).as(id).isEqualTo("200");
        }
        // the one still on none joins when allowed, under the restarted server
        policy(again, none, "{\"allowOut\":[\"" + allowed + "\"]}");
        assertThat(curl(c.api().connect(none), raw)).isEqualTo("200");
      }
      assertThat(docker.listOurs()).noneMatch(k -> serverId.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)));
    } finally {
      removeContainersOf(serverId);
    }
  }

  /** Takes the port; when something else has taken it meanwhile (another test's server), that one holds it instead. */
  private static @org.jspecify.annotations.Nullable ServerSocket squat(int port, InetAddress at) throws IOException {
    try {
      return new ServerSocket(port, 5, at);
    } catch (java.net.BindException taken) {
      return null;
    }
  }

  private static int proxyPort(DockerRuntime docker, String containerId) {
    for (String kv : docker.client().inspectContainerCmd(containerId).exec().getConfig().getEnv()) {
      if (kv.startsWith("HTTP_PROXY=")) {
        return Integer.parseInt(kv.substring(kv.lastIndexOf(':') + 1));
      }
    }
    throw new AssertionError("no HTTP_PROXY in the container's environment");
  }

  @Test
  @DisplayName("restart: names keep going through the gateway, whose port changed: a new command is told the new port, a process started before the restart keeps the old one, which the new gateway takes over when it is free")
  void gatewayPortAfterRestart() throws Exception {
    String serverId = "gwport-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    LocalServer.Builder b = restartable(serverId, state);
    try (DockerRuntime docker = DockerRuntime.connect()) {
      String id;
      String host;
      int firstPort;
      String gatewayIp;
      try (LocalServer first = b.build().start(); E2BSandboxProvider c = client(first)) {
        Assumptions.assumeTrue(first.egressEnforced(), "egress needs root, nsenter and iptables");
        host = first.egressProbe().allowedHost();
        id = create(first, ",\"network\":{\"allowOut\":[\"" + host + "\"]}");
        LiveSandbox s = c.api().connect(id);
        assertThat(curl(s, "http://" + host + "/")).isEqualTo("200");
        // waits for a go, then asks through the proxy it was started with
        assertThat(s.exec("nohup sh -c 'while [ ! -e /tmp/go ]; do sleep 0.1; done; curl -s -o /dev/null -m 5 -w %{http_code} "
            + "http://" + host + "/ > /tmp/old.out' >/dev/null 2>&1 &").exitCode()).isZero();
        String containerId = first.registry().find(id).orElseThrow().instanceId();
        firstPort = proxyPort(docker, containerId);
        gatewayIp = docker.client().inspectNetworkCmd().withNetworkId("sandboxes-egress").exec().getIpam().getConfig().get(0).getGateway();
      }
      try (LocalServer again = b.build().start(); E2BSandboxProvider c = client(again)) {
        LiveSandbox s = c.api().connect(id);
        assertThat(curl(s, "http://" + host + "/")).as("a new command after the restart").isEqualTo("200");
        s.exec("touch /tmp/go");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
            assertThat(s.exec("cat /tmp/old.out 2>/dev/null || true").stdout()).as("the process from before the restart").isEqualTo("200"));
      }
      // the old port taken by someone else: new commands still get through, told the new port
      try (ServerSocket squatter = squat(firstPort, InetAddress.getByName(gatewayIp));
           LocalServer third = b.keepSandboxesOnClose(false).build().start(); E2BSandboxProvider c = client(third)) {
        LiveSandbox s = c.api().connect(id);
        assertThat(curl(s, "http://" + host + "/")).as("a new command while the old port is taken").isEqualTo("200");
        assertThat(s.exec("echo $HTTP_PROXY").stdout().strip()).doesNotEndWith(":" + firstPort);
      }
      assertThat(docker.listOurs()).noneMatch(k -> serverId.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)));
    } finally {
      removeContainersOf(serverId);
    }
  }
}
