package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.EgressProbe;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.OnResume;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24, point 3: the network and the lifecycle given at create, against the real local server,
 * observed from inside the sandbox. Every target is one of the server's own egress witnesses; nothing
 * here is aimed at another address. The fields the local server does not serve ({@code rules},
 * {@code maskRequestHost}, a cold-boot resume) are checked on the wire in core's NetworkWireTest.
 */
@ExtendWith(SharedServer.class)
class NetworkAtCreateTest {

  /** The HTTP status curl saw through the sandbox's proxy settings, "000" for none. */
  private static String code(LiveSandbox s, String host) {
    return s.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' http://" + host + "/").stdout().strip();
  }

  @Test
  @DisplayName("open internet less denyOut 0.0.0.0/0, given at create: the very first request to an outside host is refused")
  void denyAllAtCreate(LocalServer server, E2BApi e2b) throws Exception {
    assertThat(server.egressEnforced()).isTrue();
    // internet access on, so that only the denyOut sent with the create keeps the outside host out
    // (the server's witnesses are answered by name and bypass address rules, so an outside host of
    // this machine's own stands in for "the internet")
    SandboxNetwork openLessAll = SandboxNetwork.defaults().withAllowInternetAccess(true)
        .withDenyOut(List.of(SandboxNetwork.ALL_TRAFFIC));
    try (ExternalHost external = new ExternalHost();
        LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(openLessAll))) {
      assertThat(s.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' " + external.url()).stdout().strip()).isEqualTo("403");
      assertThat(s.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' --noproxy '*' " + external.url()).stdout().strip())
          .isEqualTo("000");
      assertThat(s.info().network()).isNotNull()
          .satisfies(n -> assertThat(n.allowInternetAccess()).isTrue())
          .satisfies(n -> assertThat(n.denyOut()).containsExactly(SandboxNetwork.ALL_TRAFFIC));
      // the update opens it: the same host answers
      s.network().update(SandboxNetwork.defaults().withAllowInternetAccess(true));
      assertThat(s.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' " + external.url()).stdout().strip()).isEqualTo("200");
    }
  }

  @Test
  @DisplayName("an allow-list at create holds from the start; network().update replaces it; info and current() show each")
  void allowListThenUpdate(LocalServer server, E2BApi e2b) {
    EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(SandboxNetwork.allowOnly(p.allowedHost())))) {
      assertThat(code(s, p.allowedHost())).isEqualTo("200");
      assertThat(code(s, p.deniedHost())).isEqualTo("403");
      SandboxNetwork first = s.network().current().orElseThrow();
      assertThat(first.allowOut()).containsExactly(p.allowedHost());
      assertThat(first.denyOut()).containsExactly(SandboxNetwork.ALL_TRAFFIC);

      s.network().update(SandboxNetwork.allowOnly(p.deniedHost()));
      assertThat(code(s, p.deniedHost())).isEqualTo("200");
      assertThat(code(s, p.allowedHost())).isEqualTo("403");
      assertThat(s.info().network().allowOut()).containsExactly(p.deniedHost());

      s.network().update(SandboxNetwork.defaults().withAllowInternetAccess(false));
      assertThat(code(s, p.deniedHost())).isIn("403", "000");
      assertThat(s.network().current().orElseThrow().allowOut()).isEmpty();
    }
  }

  @Test
  @DisplayName("allowPublicTraffic false at create is kept, shown in info, and makes the sandbox carry a traffic token the handle shows")
  void allowPublicTrafficAtCreate(E2BApi e2b, io.sandboxes.e2b.E2BSandboxProvider provider) {
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(SandboxNetwork.defaults().withAllowPublicTraffic(false)))) {
      assertThat(s.info().network()).isNotNull().satisfies(n -> assertThat(n.allowPublicTraffic()).isFalse());
      assertThat(s.trafficAccessToken()).as("the create answer's traffic token").isNotBlank();
      assertThat(e2b.connect(s.id()).trafficAccessToken()).as("the connect answer carries it again").isEqualTo(s.trafficAccessToken());
      LiveSandbox listed = (LiveSandbox) provider.list().stream().filter(l -> l.id().equals(s.id())).findFirst().orElseThrow();
      assertThatThrownBy(listed::trafficAccessToken).as("a listing does not carry the token: never reported as none")
          .isInstanceOf(IllegalStateException.class);
      assertThat(s.info().sandboxDomain()).as("the local server names no domain").isNull();
      assertThat(s.sandboxDomain()).as("the client's domain, then").isNotBlank();
      // an update cannot change it (E2B fixes it at create): the client refuses before asking
      assertThatThrownBy(() -> s.network().update(SandboxNetwork.defaults().withAllowPublicTraffic(true)))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  @DisplayName("the local server keeps rules as given (HeaderRulesTest sees them applied), and refuses an egress proxy on this host's loopback without echoing its password")
  void rulesRefused(LocalServer server, E2BApi e2b) {
    EgressProbe p = server.egressProbe();
    SandboxNetwork withRule = SandboxNetwork.allowOnly(p.allowedHost()).withRule(p.allowedHost(), java.util.Map.of("X-Team", "a"));
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withNetwork(withRule))) {
      assertThat(s.info().network().rules()).isEqualTo(withRule.rules());
    }
    SandboxNetwork viaProxy = SandboxNetwork.allowOnly(p.allowedHost())
        .withEgressProxy(io.sandboxes.EgressProxy.of("127.0.0.1:1080", "u", "proxy-pass-123"));
    assertThatThrownBy(() -> e2b.create(SandboxSpec.defaults().withNetwork(viaProxy)))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(400))
        .hasMessageContaining("egressProxy").hasMessageNotContaining("proxy-pass-123");
  }

  @Test
  @DisplayName("onTimeout PAUSE_FILESYSTEM: at the deadline the sandbox pauses keeping its files, and connect resumes it without its processes")
  void filesystemPauseAtDeadline(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(2)).withOnTimeout(OnTimeout.PAUSE_FILESYSTEM))) {
      String pid = s.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      s.writeFile("/home/user/kept.txt", "kept");
      s.setTimeout(Duration.ofSeconds(1));
      await().atMost(Duration.ofSeconds(40)).until(() -> e2b.info(s.id()).state() == SandboxState.PAUSED);
      s.connect(Duration.ofMinutes(2), OnResume.RESTORE);
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(s.readFile("/home/user/kept.txt")).isEqualTo("kept");
      assertThat(s.exec("ps -o args= -p " + pid + " | grep -qx 'sleep 600' && echo alive || echo gone").stdout().strip())
          .isEqualTo("gone");
    }
  }

  @Test
  @DisplayName("pause(keepMemory) from the handle; a cold-boot resume the server cannot give is refused and leaves the sandbox paused")
  void pauseAndResumeFromTheHandle(E2BApi e2b) {
    try (LiveSandbox s = e2b.create()) {
      String pid = s.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      assertThat(s.pause(true)).isTrue();
      assertThat(s.pause(true)).isFalse();
      assertThatThrownBy(() -> s.connect(Duration.ofMinutes(1), OnResume.REBOOT))
          .isInstanceOf(SandboxApiException.class).satisfies(e -> assertThat(((SandboxApiException) e).statusCode()).isEqualTo(400));
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.PAUSED);
      s.connect(Duration.ofMinutes(1), OnResume.RESTORE);
      assertThat(s.exec("ps -o args= -p " + pid + " | grep -qx 'sleep 600' && echo alive || echo gone").stdout().strip())
          .isEqualTo("alive");
      assertThat(s.pause(false)).isTrue();
      s.connect(Duration.ofMinutes(1), OnResume.RESTORE);
      assertThat(s.exec("ps -o args= -p " + pid + " | grep -qx 'sleep 600' && echo alive || echo gone").stdout().strip())
          .isEqualTo("gone");
    }
  }
}
