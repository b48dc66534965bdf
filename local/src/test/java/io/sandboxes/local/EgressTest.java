package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.EgressProbe;
import io.sandboxes.EgressVerdict;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Egress, observed from inside real sandboxes. Every target is one of the server's own witnesses
 * (on loopback, or on the network the server made): nothing here is aimed at another address.
 */
@ExtendWith(SharedServer.class)
class EgressTest {

  /**
   * The HTTP status curl saw, "000" for none. A refusal is fast (a 403 from the gateway, or a
   * REJECT); the 15 s cap is only for a loaded machine under gVisor, where a 5 s cap once cut off
   * the gateway's 403 ({@link #denialsExplainThemselves} bounds how fast a refusal is).
   */
  private static String code(LiveSandbox s, String url, boolean viaProxy) {
    ExecResult r = s.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' " + (viaProxy ? "" : "--noproxy '*' ") + url);
    return r.stdout().strip();
  }

  private static String allowed(EgressProbe p) {
    return "http://" + p.allowedHost() + "/";
  }

  private static String denied(EgressProbe p) {
    return "http://" + p.deniedHost() + "/";
  }

  private static String raw(EgressProbe p) {
    return "http://" + p.rawIp() + "/";
  }

  private static String gatewayIp(EgressProbe p) {
    return p.rawIp().substring(0, p.rawIp().indexOf(':'));
  }

  private static void policy(LocalServer server, String sandboxId, String json) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId + "/network"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
  }

  @Test
  @DisplayName("no policy: nothing is reachable, witnesses included, directly or through the gateway, and no name resolves")
  void nothingWithoutPolicy(LocalServer server, E2BApi e2b) {
    assertThat(server.egressEnforced()).isTrue();
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      assertThat(code(s, allowed(p), true)).isEqualTo("000");
      assertThat(code(s, denied(p), true)).isEqualTo("000");
      assertThat(code(s, raw(p), true)).isEqualTo("000");
      assertThat(code(s, raw(p), false)).isEqualTo("000");
      assertThat(s.exec("getent hosts " + p.allowedHost()).exitCode()).isNotZero();
      assertThat(s.exec("timeout 5 bash -c 'echo > /dev/tcp/" + gatewayIp(p) + "/22' 2>&1").exitCode()).isNotZero();
    }
  }

  @Test
  @DisplayName("an allowed domain is reachable with plain curl; a denied domain and a raw IP are not, whatever the port")
  void allowList(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"],\"denyOut\":[\"0.0.0.0/0\"]}");
      assertThat(code(s, allowed(p), true)).isEqualTo("200");
      assertThat(s.exec("curl -s -m 5 " + allowed(p)).stdout()).isEqualTo("witness allowed\n");
      assertThat(s.exec("python3 -c \"import urllib.request; print(urllib.request.urlopen('" + allowed(p) + "', timeout=5).status)\"")
          .stdout()).isEqualTo("200\n");
      // the gateway answers a refusal itself (403, saying why); past it, a refused address fails at once
      assertThat(code(s, denied(p), true)).isEqualTo("403");
      assertThat(code(s, raw(p), true)).isEqualTo("403");
      assertThat(code(s, raw(p), false)).isEqualTo("000");
      assertThat(s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' https://" + p.deniedHost() + "/").stdout().strip()).isEqualTo("000");
      assertThat(s.exec("getent hosts " + p.deniedHost()).exitCode()).isNotZero();
    }
  }

  @Test
  @DisplayName("a wildcard rule and a CIDR rule are honoured; denyOut is honoured where internet access is on; the host's own address stays out of reach whatever the policy names")
  void wildcardCidrDeny(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    String suffix = p.allowedHost().substring(p.allowedHost().indexOf('.'));
    try (ExternalHost external = new ExternalHost(); LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"*" + suffix + "\"]}");
      assertThat(code(s, allowed(p), true)).isEqualTo("200");
      assertThat(code(s, denied(p), true)).isEqualTo("200");
      assertThat(code(s, external.url(), true)).isEqualTo("403");
      assertThat(code(s, external.url(), false)).isEqualTo("000");

      policy(server, s.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      assertThat(code(s, external.url(), true)).isEqualTo("200");
      assertThat(code(s, external.url(), false)).isEqualTo("200");
      assertThat(code(s, allowed(p), true)).isEqualTo("403");

      policy(server, s.id(), "{\"denyOut\":[\"" + external.address() + "/32\"],\"allow_internet_access\":true}");
      assertThat(code(s, allowed(p), true)).isEqualTo("200");
      assertThat(code(s, external.url(), true)).isEqualTo("403");
      assertThat(code(s, external.url(), false)).isEqualTo("000");

      // the gateway's address is the host's: named outright, it opens nothing
      policy(server, s.id(), "{\"allowOut\":[\"" + gatewayIp(p) + "/32\"]}");
      assertThat(code(s, raw(p), true)).isEqualTo("403");
      assertThat(code(s, raw(p), false)).isEqualTo("000");
    }
  }

  @Test
  @DisplayName("denials explain themselves: the gateway answers a refused name with 403 saying which host the policy refused and what it allows, a refused tunnel fails with that 403, and a refused address or name lookup fails at once instead of timing out")
  void denialsExplainThemselves(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      ExecResult plain = s.exec("curl -s -i -m 5 " + denied(p));
      assertThat(plain.stdout()).startsWith("HTTP/1.1 403 Egress to " + p.deniedHost() + ":80 refused by the sandbox network policy")
          .contains("Proxy-Status: sandboxes-egress; error=destination_ip_prohibited")
          .contains("refused " + p.deniedHost() + ":80: not on its allow-list")
          .contains("It allows only " + p.allowedHost())
          .contains("not a network fault");
      ExecResult tunnel = s.exec("curl -sS -o /dev/null -m 5 https://" + p.deniedHost() + "/");
      assertThat(tunnel.stderr()).contains("403");
      ExecResult python = s.exec("python3 -c \"import urllib.request\ntry:\n urllib.request.urlopen('" + denied(p)
          + "', timeout=5)\nexcept Exception as e:\n print(e.code, e.reason)\"");
      assertThat(python.stdout()).startsWith("403 Egress to " + p.deniedHost() + ":80 refused by the sandbox network policy");

      // past the gateway: refused at once (a dropped packet would hold curl to its 10 s limit)
      ExecResult direct = s.exec("s=$(date +%s%N); curl -s -o /dev/null -m 10 --noproxy '*' " + raw(p) + "; echo $? $(( ($(date +%s%N) - s) / 1000000 ))");
      String[] exitAndMillis = direct.stdout().strip().split(" ");
      assertThat(exitAndMillis[0]).as("curl's exit: could not connect").isEqualTo("7");
      assertThat(Long.parseLong(exitAndMillis[1])).as("ms until refused").isLessThan(3_000);
      ExecResult lookup = s.exec("s=$(date +%s%N); getent hosts " + p.deniedHost() + "; echo $? $(( ($(date +%s%N) - s) / 1000000 ))");
      String[] lookedUp = lookup.stdout().strip().split(" ");
      assertThat(lookedUp[0]).isNotEqualTo("0");
      assertThat(Long.parseLong(lookedUp[1])).as("ms until the lookup failed").isLessThan(3_000);
    }
  }

  @Test
  @DisplayName("a live PUT /network change takes effect both ways")
  void liveChange(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      assertThat(code(s, allowed(p), true)).isEqualTo("000");
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      assertThat(code(s, allowed(p), true)).isEqualTo("200");
      policy(server, s.id(), "{}");
      assertThat(code(s, allowed(p), true)).as("deny-all closes the way to the gateway too").isEqualTo("000");
    }
  }

  @Test
  @DisplayName("a filesystem-only pause and resume (a new network namespace) keeps the policy enforced")
  void policySurvivesRestart(LocalServer server, E2BApi e2b) throws Exception {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      policy(server, s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      e2b.pause(s.id(), false);
      LiveSandbox back = e2b.connect(s.id());
      assertThat(code(back, allowed(p), true)).isEqualTo("200");
      assertThat(code(back, raw(p), false)).isEqualTo("000");
    }
  }

  @Test
  @DisplayName("a provider pointed at a loopback server probes the witnesses it names, and never public hosts when it names none")
  void loopbackDefaults(LocalServer server) throws Exception {
    try (E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
        .apiKey(server.apiKey()).build()) {
      assertThat(provider.verifyEgress().state()).isEqualTo(EgressVerdict.State.FILTERED);
    }
    try (io.sandboxes.local.contract.FaultServer api = new io.sandboxes.local.contract.FaultServer(server.apiUrl());
         E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(api.url()).sandboxUrl(server.sandboxUrl())
             .apiKey(server.apiKey()).build()) {
      api.on(io.sandboxes.local.contract.FaultServer.route("GET", "/local/egress-probe"),
          io.sandboxes.local.contract.FaultServer.json(404, "{\"code\":404,\"message\":\"no such route\"}"));
      EgressVerdict v = provider.verifyEgress();
      assertThat(v.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(v.detail()).contains("public hosts are not probed");
      assertThat(api.requests("POST", "/v2/sandboxes")).isEmpty();
    }
  }

  @Test
  @DisplayName("verifyEgress observes: filtered on the local server, open on a deliberately open one, inconclusive with the allowed witness down")
  void verdicts(LocalServer server) throws Exception {
    try (E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
        .apiKey(server.apiKey()).egressProbe(server.egressProbe()).build()) {
      EgressVerdict v = provider.verifyEgress();
      assertThat(v.state()).as(v.detail()).isEqualTo(EgressVerdict.State.FILTERED);
    }
    for (var mode : List.of("open", "witness-down")) {
      LocalServer.Builder b = TestRuntime.builder();
      if (mode.equals("open")) {
        b.openEgressForTesting(true);
      } else {
        b.allowedWitnessForTesting(false);
      }
      try (LocalServer other = b.build().start();
           E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(other.apiUrl()).sandboxUrl(other.sandboxUrl())
               .apiKey(other.apiKey()).egressProbe(other.egressProbe()).build()) {
        EgressVerdict v = provider.verifyEgress();
        assertThat(v.state()).as(mode + ": " + v.detail())
            .isEqualTo(mode.equals("open") ? EgressVerdict.State.OPEN : EgressVerdict.State.INCONCLUSIVE);
      }
    }
  }
}
