package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 25, item 3, through the official JS SDK ({@code src/test/node/egress-proxy.mjs}, the
 * version {@code src/test/node/package.json} pins): {@code egressProxy} at create tunnels the
 * sandbox's requests through a SOCKS5 witness with credentials ({@link EgressProxyTest}'s, in an
 * {@link ExternalHost}), {@code getInfo} shows the address and user but never the password, an
 * update without it stops tunneling, and a proxy on this host's loopback is refused. Node and npm
 * are required; without them this test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkEgressProxyTest {

  @Test
  @Timeout(value = 8, unit = TimeUnit.MINUTES)
  @DisplayName("the official SDK's egressProxy: tunneled with credentials, info without the password, cleared by an update, loopback refused")
  void egressProxyThroughTheOfficialSdk(LocalServer server) throws Exception {
    Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
    NodeScripts node = NodeScripts.install("node-egress-proxy", "egress-proxy.mjs");
    String password = "sdk-pw-" + Long.toHexString(System.nanoTime());
    String allowed = server.egressProbe().allowedHost();
    try (ExternalHost outside = new ExternalHost()) {
      List<String> seen = EgressProxyTest.socks(outside, 1080, "sdk", "sdk-user", password);
      String address = outside.address() + ":1080";
      String out = node.run(NodeScripts.env(server, "PROXY_ADDRESS", address, "PROXY_PASSWORD", password, "ALLOWED_HOST", allowed),
          Duration.ofMinutes(6), "node", "egress-proxy.mjs");
      assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
      Map<String, String> steps = NodeScripts.steps(out);
      assertThat(steps).as("the script printed:\n%s", out)
          .containsEntry("tunneled", "socks sdk " + allowed + " GET / HTTP/1.1")
          .containsEntry("info", "{\"address\":\"" + address + "\",\"username\":\"sdk-user\"}")
          .containsEntry("info.raw.password", "false")
          .containsEntry("cleared", "undefined")
          .containsEntry("direct", "witness allowed")
          .containsEntry("done", "ok");
      assertThat(steps.get("loopback")).startsWith("SandboxError 400: 'egressProxy' 127.0.0.1:1080 cannot be used: 127.0.0.1 is a loopback address");
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(seen).containsExactly("connect 3 " + allowed + " 80"));
    }
  }
}
