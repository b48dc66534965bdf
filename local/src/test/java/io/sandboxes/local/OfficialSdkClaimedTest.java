package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.local.internal.LocalSandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The official {@code e2b} npm SDK sees a claimed warm pool member as it sees a cold sandbox: a
 * server of its own with a pool of one, a create once the member is ready (the server's registry
 * says it was claimed), and one that must start cold (a volume mount), compared field by field
 * as the SDK reports them. Node and npm are required; without them this test fails.
 */
class OfficialSdkClaimedTest {

  /** Fields the script prints for each sandbox; every one must read the same for both. */
  private static final List<String> FIELDS = List.of("who", "root", "sudo", "envNames", "envPerCommand", "info", "metadata",
      "listed", "files.read", "files.list", "files.stat", "files.exists", "connect");

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the official JS SDK: a claimed pool member and a cold sandbox read the same (hostname, hosts, user, sudo, env, metadata, info, listing, files, connect)")
  void claimedMemberLikeColdThroughOfficialSdk() throws Exception {
    NodeScripts node = NodeScripts.install("node-claimed", "claimed.mjs");

    try (LocalServer server = LocalServer.builder().warmPool(1).build().start()) {
      await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
          .until(() -> server.registry().poolStatus().get("base")[0] >= 1);
      String out = node.run(NodeScripts.env(server), Duration.ofMinutes(3), "node", "claimed.mjs");
      assertThat(out).as("claimed script output:\n%s", out).startsWith("exit 0");
      Map<String, String> steps = NodeScripts.steps(out);
      assertThat(steps).as(out).containsEntry("done", "ok");
      LocalSandbox warm = server.registry().find(steps.get("warm.id")).orElseThrow();
      LocalSandbox cold = server.registry().find(steps.get("cold.id")).orElseThrow();
      try {
        assertThat(warm.pooled()).as("the first create claimed the ready member").isTrue();
        assertThat(cold.pooled()).as("a create with a volume mount starts cold").isFalse();
        for (String f : FIELDS) {
          assertThat(steps.get("warm." + f)).as("%s as the SDK sees it, claimed vs cold\n%s", f, out)
              .isNotNull().isEqualTo(steps.get("cold." + f));
        }
        // and what they read is what a sandbox should read
        assertThat(steps).containsEntry("warm.who", "<id>|<id>|1|user|1000|1000|/home/user|/home/user|hi there")
            .containsEntry("warm.root", "root|sudo-ok")
            .containsEntry("warm.sudo", "root")
            .containsEntry("warm.envPerCommand", "hi there|per-command")
            .containsEntry("warm.info", "base running cpu=2 mem=1024")
            .containsEntry("warm.metadata", "[[\"n\",\"1\"],[\"owner\",\"claimed-test\"]]")
            .containsEntry("warm.listed", "found")
            .containsEntry("warm.files.read", "written through the sdk")
            .containsEntry("warm.files.stat", "user:user 644|" + steps.get("cold.files.stat").substring(steps.get("cold.files.stat").indexOf('|') + 1))
            .containsEntry("warm.connect", "hi there");
      } finally {
        server.registry().kill(warm.id());
        server.registry().kill(cold.id());
        String volume = steps.get("volume.id");
        if (volume != null) {
          try (io.sandboxes.e2b.E2BSandboxProvider c = io.sandboxes.e2b.E2BSandboxProvider.builder().apiUrl(server.apiUrl())
              .sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build()) {
            c.api().deleteVolume(volume);
          }
        }
      }
    }
  }
}
