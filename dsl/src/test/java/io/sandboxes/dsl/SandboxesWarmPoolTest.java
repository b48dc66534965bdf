package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The warm pool of the server {@code Sandboxes.local(..)} starts, as Docker sees it: unclaimed
 * members are the containers labelled with the server's id and as pool members whose name is
 * still {@code sandboxes-pool-<id>}.
 */
class SandboxesWarmPoolTest {

  @Test
  @DisplayName("Sandboxes.local(o -> o.warmPool(0)) starts no pool container: a create starts its sandbox cold, and nothing follows")
  void poolOff() throws Exception {
    try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(0).reuse(false))) {
      try (LiveSandbox sandbox = sandboxes.sandbox().create()) {
        assertThat(sandbox.exec("echo up").stdout()).isEqualTo("up\n");
        String server = serverOf(sandbox.id());
        // the count is of something real: this very sandbox's container carries the labels looked for
        assertThat(docker("ps", "--filter", "label=io.sandboxes.server=" + server, "--format", "{{.Names}}"))
            .contains("sandboxes-" + sandbox.id());
        // a pool would refill within a few seconds of a create (150 ms after it, a member at a time)
        await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(20))
            .until(() -> poolMembers(server).isEmpty() && allPoolLabelled(server).isEmpty());
      }
    }
  }

  @Test
  @DisplayName("Sandboxes.local(o -> o.warmPool(3)) keeps three ready, claims one for a create, refills to three and no more")
  void poolOfThree() throws Exception {
    try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(3).reuse(false))) {
      String server;
      try (LiveSandbox sandbox = sandboxes.sandbox().create()) {
        server = serverOf(sandbox.id());
        await().atMost(Duration.ofMinutes(2)).until(() -> poolMembers(server).size() == 3);
        try (LiveSandbox second = sandboxes.sandbox().create()) {
          // the second create took a ready member: its container is a pool member, renamed to its id
          await().atMost(Duration.ofSeconds(30)).until(() -> allPoolLabelled(server).contains("sandboxes-" + second.id()));
          await().atMost(Duration.ofMinutes(2)).until(() -> poolMembers(server).size() == 3);
          await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(15)).until(() -> poolMembers(server).size() == 3);
        }
      }
      sandboxes.close();
      // closing the client stops the server, which removes the members nobody claimed
      await().atMost(Duration.ofSeconds(60)).until(() -> poolMembers(server).isEmpty());
    }
  }

  @Test
  @DisplayName("Sandboxes.local(o -> o.warmPoolMax(3)): six creates in a row grow the pool of one to three, and no further")
  void poolGrowsToItsMaximum() throws Exception {
    try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(1).warmPoolMax(3).reuse(false))) {
      List<LiveSandbox> made = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < 6; i++) {
          made.add(sandboxes.sandbox().create());
        }
        String server = serverOf(made.get(0).id());
        // six creates within ten seconds ask for six; the maximum holds the pool at three (16 by default would not)
        await().atMost(Duration.ofMinutes(2)).until(() -> poolMembers(server).size() == 3);
        await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(15)).until(() -> poolMembers(server).size() == 3);
      } finally {
        made.forEach(LiveSandbox::close);
      }
    }
  }

  /** The server id on the container of a sandbox (its name holds the sandbox's id, pooled or not). */
  private static String serverOf(String sandboxId) throws Exception {
    List<String> out = docker("ps", "-a", "--filter", "name=" + sandboxId, "--format", "{{.Label \"io.sandboxes.server\"}}");
    assertThat(out).hasSize(1);
    return out.get(0);
  }

  /** The server's unclaimed pool members. */
  private static List<String> poolMembers(String server) throws Exception {
    return allPoolLabelled(server).stream().filter(n -> n.startsWith("sandboxes-pool-")).toList();
  }

  /** Every container of the server labelled a pool member, claimed or not. */
  private static List<String> allPoolLabelled(String server) throws Exception {
    return docker("ps", "-a", "--filter", "label=io.sandboxes.server=" + server, "--filter", "label=io.sandboxes.pool-member=true",
        "--format", "{{.Names}}");
  }

  private static List<String> docker(String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("docker"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("docker %s: %s", String.join(" ", args), out).isZero();
    return out.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }
}
