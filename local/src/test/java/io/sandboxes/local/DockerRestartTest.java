package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Paused sandboxes through a real restart of the Docker engine and of the server (issue 25, item
 * 2): {@code scripts/docker-restart.sh} stops the machine's dockerd (which unpauses and stops
 * every container as it shuts down) and starts it again. It stops every container on the
 * machine, so it runs only when {@code -Dsandboxes.test.restart-docker=true} asks for it: the
 * Docker restart pass of {@code scripts/test.sh} does, alone, after every other test. RestartTest
 * covers the same ground with Docker's shutdown done by hand, in every run.
 */
@EnabledIfSystemProperty(named = "sandboxes.test.restart-docker", matches = "true")
class DockerRestartTest {

  private static LocalServer server(String id, Path state, String key) {
    return LocalServer.builder().serverId(id).stateDir(state).apiKey(key).keepSandboxesOnClose(true).warmPool(0).build().start();
  }

  @Test
  @Timeout(value = 6, unit = TimeUnit.MINUTES)
  @DisplayName("a real Docker restart with the server down: a memory pause and a filesystem pause both come back paused with their files, and resume without the processes of before")
  void pausedSandboxesSurviveADockerRestart() throws Exception {
    String id = "docker-restart-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    String frozen;
    String frozenPid;
    String stopped;
    String frozenContainer;
    try (LocalServer first = server(id, state, key); E2BSandboxProvider c1 = RestartTest.client(first)) {
      E2BApi e2b = c1.api();
      LiveSandbox f = e2b.create();
      f.writeFile("/home/user/kept.txt", "frozen, then through a Docker restart");
      frozenPid = f.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      assertThat(f.pause()).isTrue();
      frozen = f.id();
      frozenContainer = first.registry().find(frozen).orElseThrow().instanceId();
      LiveSandbox s = e2b.create();
      s.writeFile("/home/user/kept.txt", "stopped, then through a Docker restart");
      assertThat(e2b.pause(s.id(), false)).isTrue();
      stopped = s.id();
    }
    try (DockerRuntime docker = DockerRuntime.connect()) {
      assertThat(docker.client().inspectContainerCmd(frozenContainer).exec().getState().getPaused()).as("frozen before").isTrue();
    }

    restartDocker();

    try (DockerRuntime docker = DockerRuntime.connect()) {
      // what the restart did to the frozen container: not paused, not running, still there with its files
      var after = docker.client().inspectContainerCmd(frozenContainer).exec().getState();
      assertThat(after.getPaused()).isFalse();
      assertThat(after.getRunning()).isFalse();
    }
    try (LocalServer second = server(id, state, key); E2BSandboxProvider c2 = RestartTest.client(second);
        DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c2.api();
      assertThat(e2b.info(frozen).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.info(stopped).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(second.registry().find(frozen).orElseThrow().memoryKept()).as("the memory is not claimed kept").isFalse();

      LiveSandbox f = e2b.connect(frozen);
      assertThat(f.readFile("/home/user/kept.txt")).isEqualTo("frozen, then through a Docker restart");
      assertThat(f.exec("ps -o args= -p " + frozenPid + " || true").stdout()).doesNotContain("sleep 600");
      assertThat(f.exec("echo back").stdout()).isEqualTo("back\n");
      LiveSandbox s = e2b.connect(stopped);
      assertThat(s.readFile("/home/user/kept.txt")).isEqualTo("stopped, then through a Docker restart");
      assertThat(e2b.info(frozen).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(e2b.info(stopped).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(e2b.kill(frozen)).isTrue();
      assertThat(e2b.kill(stopped)).isTrue();
      Set<String> gone = Set.of(frozen, stopped);
      Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        assertThat(docker.listOurs()).noneMatch(c -> c.getLabels() != null && gone.contains(String.valueOf(c.getLabels().get("io.sandboxes.sandbox-id"))));
        assertThat(gone).noneMatch(g -> Files.exists(state.resolve(g + ".json")));
      });
    }
  }

  /** Runs scripts/docker-restart.sh from the project's root, failing with its output when it fails. */
  private static void restartDocker() throws IOException, InterruptedException {
    Path root = Path.of("").toAbsolutePath();
    while (root != null && !Files.exists(root.resolve("scripts/docker-restart.sh"))) {
      root = root.getParent();
    }
    assertThat(root).as("the project's root, with scripts/docker-restart.sh").isNotNull();
    Process p = new ProcessBuilder("bash", root.resolve("scripts/docker-restart.sh").toString()).redirectErrorStream(true).start();
    String out;
    try (var in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("the restart ended: %s", out).isTrue();
    System.err.print(out);
    assertThat(p.exitValue()).as("docker-restart.sh said:\n%s", out).isZero();
  }
}
