package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.EgressProbe;
import io.sandboxes.ExecOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The host's sandbox chains taken away from outside (a firewall reload, an {@code iptables -F}):
 * the next policy the server writes finds them gone, writes them all again, its own sandboxes'
 * included, and goes on. Isolated: it takes the chains away from every server in this JVM.
 */
@Isolated
@ExtendWith(SharedServer.class)
class HostFirewallRepairTest {

  private static String sh(String command) throws Exception {
    Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return out;
  }

  /**
   * What a firewall reload does to chains it does not know: hooks, dispatch chains and sandbox
   * chains, gone. One {@code iptables-restore} batch, so the servers' own 5 s look cannot put a
   * chain back halfway through; its success is the proof that everything was gone at that moment
   * (a look afterwards could already see a repair).
   */
  private static void wipe() throws Exception {
    String script = "rules=$(iptables -w 10 -S);"
        + " { echo '*filter';"
        + "   echo \"$rules\" | grep -E '^-A (INPUT|FORWARD|DOCKER-USER) .*-j (SANDBOXES-|SBX-)[A-Z0-9-]*$' | sed 's/^-A/-D/';"
        + "   echo \"$rules\" | awk '/^-N (SANDBOXES-|SBX-)/ {print \"-F \" $2}';"
        + "   echo \"$rules\" | awk '/^-N (SANDBOXES-|SBX-)/ {print \"-X \" $2}';"
        + "   echo COMMIT; } | iptables-restore -w 10 --noflush && echo wiped";
    await().atMost(Duration.ofSeconds(30)).until(() -> sh(script).strip().endsWith("wiped"));
  }

  private static String code(LiveSandbox s, String url) {
    return s.exec("curl -s -o /dev/null -m 4 -w '%{http_code}' --noproxy '*' " + url, ExecOptions.defaults().withUser("root"))
        .stdout().strip();
  }

  @Test
  @DisplayName("after the host's chains are wiped, the server puts back the hooks and every sandbox's chain and entries, with no call to prompt it")
  void repairsUnprompted(LocalServer server, E2BApi e2b) throws Exception {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
    try (ExternalHost external = new ExternalHost(); LiveSandbox s = e2b.create()) {
      EgressBoundaryTest.policy(server, s.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      String ip = server.registry().find(s.id()).orElseThrow().networkAddress();
      wipe();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(List.of(sh("iptables -w 10 -S").split("\n")))
          .anyMatch(l -> l.startsWith("-A SANDBOXES-IN -s " + ip + "/32 -m physdev"))
          .anyMatch(l -> l.startsWith("-A SANDBOXES-FWD -s " + ip + "/32 -m physdev"))
          .contains("-A SANDBOXES-FWD -j DROP"));
      long pid = EgressBoundaryTest.pidOf(server, s.id());
      sh("nsenter -t " + pid + " -n sh -c 'iptables -P OUTPUT ACCEPT && iptables -P INPUT ACCEPT && iptables -F'");
      assertThat(code(s, external.url())).isEqualTo("200");
      assertThat(code(s, "http://" + EgressBoundaryTest.hostAddresses().get(0) + ":9/")).isEqualTo("000");
    }
  }

  @Test
  @DisplayName("after the host's chains are wiped, the next policy written puts back the hooks and every sandbox's chain and entries")
  void repairsAfterAWipe(LocalServer server, E2BApi e2b) throws Exception {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
    EgressProbe p = server.egressProbe();
    try (ExternalHost external = new ExternalHost(); LiveSandbox before = e2b.create(); LiveSandbox after = e2b.create()) {
      EgressBoundaryTest.policy(server, before.id(), "{\"allowOut\":[\"" + external.address() + "/32\"]}");
      assertThat(code(before, external.url())).isEqualTo("200");
      String beforeIp = server.registry().find(before.id()).orElseThrow().networkAddress();

      wipe();
      EgressBoundaryTest.policy(server, after.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      // written again at once by the policy that found them gone, or within the server's next look
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        String rules = sh("iptables -w 10 -S");
        assertThat(rules).contains("-j SANDBOXES-IN").contains("-j SANDBOXES-FWD").contains("-A SANDBOXES-IN -j DROP");
        assertThat(List.of(rules.split("\n"))).anyMatch(l -> l.startsWith("-A SANDBOXES-FWD -s " + beforeIp + "/32 -m physdev"));
      });
      // the earlier sandbox is judged by the host again: its namespace's rules lifted, only its allow-list gets through
      long pid = EgressBoundaryTest.pidOf(server, before.id());
      sh("nsenter -t " + pid + " -n sh -c 'iptables -P OUTPUT ACCEPT && iptables -P INPUT ACCEPT && iptables -F'");
      assertThat(code(before, external.url())).isEqualTo("200");
      assertThat(code(after, "http://" + p.allowedHost() + "/")).as("the proxy variables are not used here").isEqualTo("000");
      assertThat(after.exec("curl -s -o /dev/null -m 4 -w '%{http_code}' http://" + p.allowedHost() + "/").stdout()).isEqualTo("200");
    }
  }
}
