package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
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
    Path work = Path.of("target", "node-egress-proxy").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json", "egress-proxy.mjs")) {
      Files.copy(Path.of("src", "test", "node", f), work.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    String password = "sdk-pw-" + Long.toHexString(System.nanoTime());
    String allowed = server.egressProbe().allowedHost();
    try (ExternalHost outside = new ExternalHost()) {
      List<String> seen = EgressProxyTest.socks(outside, 1080, "sdk", "sdk-user", password);
      String address = outside.address() + ":1080";
      Map<String, String> env = Map.of("E2B_API_URL", server.apiUrl().toString(), "E2B_SANDBOX_URL", server.sandboxUrl().toString(),
          "E2B_API_KEY", server.apiKey(), "PROXY_ADDRESS", address, "PROXY_PASSWORD", password, "ALLOWED_HOST", allowed);
      assertThat(run(work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")).startsWith("exit 0");
      String out = run(work, env, "node", "egress-proxy.mjs");
      assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
      Map<String, String> steps = new LinkedHashMap<>();
      for (String line : out.split("\n")) {
        int i = line.indexOf(": ");
        if (i > 0) {
          steps.put(line.substring(0, i), line.substring(i + 2));
        }
      }
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

  /** @return {@code exit <code>} and then the process's output */
  private static String run(Path work, Map<String, String> env, String... cmd) throws Exception {
    Path log = Files.createTempFile("node-egress-proxy-", ".log");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(Duration.ofMinutes(6).toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor();
        return "timeout\n" + Files.readString(log, StandardCharsets.UTF_8);
      }
      return "exit " + p.exitValue() + "\n" + Files.readString(log, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
