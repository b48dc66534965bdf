package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Image;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.ForkResult;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SnapshotInfo;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code POST /sandboxes/{id}/fork} through the Java client, on a server of its own so that what
 * it leaves in Docker (containers and images labelled with its id) can be counted; its tests run
 * one after the other for the same reason.
 */
@Execution(ExecutionMode.SAME_THREAD)
class ForkTest {
  private static final String SERVER_ID = "fork-test-" + UUID.randomUUID().toString().substring(0, 8);
  private static LocalServer server;
  private static E2BSandboxProvider provider;
  private static E2BApi e2b;
  private static DockerRuntime docker;

  @BeforeAll
  static void start() {
    server = LocalServer.builder().serverId(SERVER_ID).warmPool(0).build().start(); // its container counts are forks and parents only
    provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
    e2b = provider.api();
    docker = DockerRuntime.connect();
  }

  @AfterAll
  static void stop() {
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
    TestImages.removeMadeBy(SERVER_ID);
  }

  private static List<Container> containersOfThisServer() {
    return docker.client().listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(DockerRuntime.LABEL_SERVER, SERVER_ID)).exec();
  }

  private static List<Image> imagesOfThisServer() {
    return docker.client().listImagesCmd().withShowAll(true)
        .withLabelFilter(Map.of(DockerRuntime.LABEL_SERVER, SERVER_ID)).exec();
  }

  private static boolean exists(LiveSandbox s, String path) {
    return s.exec("test -e " + path + " && echo yes || echo no").stdout().strip().equals("yes");
  }

  @Test
  @DisplayName("two forks get the parent's files, environment and metadata, diverge from it and each other, and the parent runs on untouched; nothing is left after the kills")
  void forksDivergeAndLeaveNothing() {
    String parentId;
    try (LiveSandbox parent = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(3))
        .withEnv(Map.of("FORK_VAR", "from-the-parent")).withMetadata(Map.of("role", "parent")))) {
      parentId = parent.id();
      parent.writeFile("/home/user/before.txt", "written before the fork");
      String sleeper = parent.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      Instant parentEnd = e2b.info(parentId).endAt();

      Instant asked = Instant.now();
      List<ForkResult> results = parent.fork(2, Duration.ofSeconds(90));
      assertThat(results).hasSize(2).allMatch(ForkResult::started);
      LiveSandbox a = results.get(0).orThrow();
      LiveSandbox b = results.get(1).orThrow();
      try (a; b) {
        assertThat(List.of(a.id(), b.id())).doesNotHaveDuplicates().doesNotContain(parentId);
        for (LiveSandbox fork : List.of(a, b)) {
          assertThat(fork.readFile("/home/user/before.txt")).isEqualTo("written before the fork");
          assertThat(fork.exec("echo $FORK_VAR").stdout()).isEqualTo("from-the-parent\n");
          SandboxInfo info = e2b.info(fork.id());
          assertThat(info.metadata()).containsEntry("role", "parent");
          assertThat(info.templateId()).isEqualTo("base");
          assertThat(info.state()).isEqualTo(SandboxState.RUNNING);
          // its own deadline, from the fork's timeout, not the parent's
          assertThat(info.endAt()).isBetween(asked.plusSeconds(80), Instant.now().plusSeconds(91));
          // the filesystem only: the parent's processes do not run in a fork
          assertThat(fork.exec("ps -eo args | grep -c '^sleep 600' || true").stdout().strip()).isEqualTo("0");
        }

        a.writeFile("/home/user/only-in-a.txt", "a");
        b.writeFile("/home/user/before.txt", "b changed it");
        parent.writeFile("/home/user/after.txt", "written after the fork");
        assertThat(exists(parent, "/home/user/only-in-a.txt")).isFalse();
        assertThat(exists(b, "/home/user/only-in-a.txt")).isFalse();
        assertThat(parent.readFile("/home/user/before.txt")).isEqualTo("written before the fork");
        assertThat(a.readFile("/home/user/before.txt")).isEqualTo("written before the fork");
        assertThat(exists(a, "/home/user/after.txt")).isFalse();
        assertThat(exists(b, "/home/user/after.txt")).isFalse();

        // the parent: still running, its process alive, its deadline where it was
        assertThat(parent.exec("ps -o args= -p " + sleeper).stdout().strip()).isEqualTo("sleep 600");
        SandboxInfo parentNow = e2b.info(parentId);
        assertThat(parentNow.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(parentNow.endAt()).isEqualTo(parentEnd);
        assertThat(containersOfThisServer()).hasSize(3);
      }
    }
    assertThatThrownBy(() -> e2b.fork(parentId, 1, Duration.ofSeconds(30))).isInstanceOf(SandboxNotFoundException.class);
    // the forks' image goes with the last of them; no container is left either (removed in the
    // background once the kills have answered)
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(containersOfThisServer()).isEmpty();
      assertThat(imagesOfThisServer()).isEmpty();
    });
  }

  @Test
  @DisplayName("one fork from the handle; a fork of a fork; a fork of a sandbox made from a snapshot is no new snapshot; a snapshot of a fork outlives it and a restart")
  void forkOfForkAndOfSnapshotChild() throws Exception {
    String name = "fork-snap-" + UUID.randomUUID().toString().substring(0, 8);
    SnapshotInfo ofFork;
    try (LiveSandbox source = e2b.create()) {
      source.writeFile("/home/user/gen.txt", "0");
      SnapshotInfo snap = e2b.createSnapshot(source.id(), name);
      try (LiveSandbox child = e2b.create(SandboxSpec.of(snap.snapshotId()))) {
        child.writeFile("/home/user/gen.txt", "1");
        try (LiveSandbox fork = child.fork(Duration.ofSeconds(60))) {
          assertThat(e2b.info(fork.id()).templateId()).isEqualTo(snap.snapshotId());
          // the fork's image carries the snapshot's labels from its parent, yet it is no second snapshot of that name (counted by
          // name: other test classes make and delete snapshots on this engine meanwhile)
          assertThat(e2b.listSnapshots(null, name)).hasSize(1);
          assertThat(e2b.listSnapshots(fork.id(), null)).isEmpty();
          fork.writeFile("/home/user/gen.txt", "2");
          try (LiveSandbox grandchild = fork.fork(Duration.ofSeconds(60))) {
            assertThat(grandchild.readFile("/home/user/gen.txt")).isEqualTo("2");
          }
          assertThat(child.readFile("/home/user/gen.txt")).isEqualTo("1");
          ofFork = fork.snapshot(name + "-of-fork");
        }
      }
    }
    // a server starting with this id removes the fork images nothing uses; a snapshot is no fork image
    try (LocalServer again = LocalServer.builder().serverId(SERVER_ID).warmPool(0).stateDir(java.nio.file.Files.createTempDirectory("fork-test-"))
        .build().start()) {
      assertThat(again.registry().list()).isEmpty();
    }
    try (LiveSandbox fromSnapshotOfFork = e2b.create(SandboxSpec.of(ofFork.snapshotId()))) {
      assertThat(fromSnapshotOfFork.readFile("/home/user/gen.txt")).isEqualTo("2");
    }
    assertThat(e2b.deleteTemplate(ofFork.snapshotId())).isTrue();
    assertThat(e2b.deleteTemplate(name + ":default")).isTrue();
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      assertThat(containersOfThisServer()).isEmpty();
      assertThat(imagesOfThisServer()).isEmpty();
    });
  }

  @Test
  @DisplayName("a paused parent is 409 and a bad count or timeout 400, before any fork is attempted")
  void refusals() throws Exception {
    try (LiveSandbox parent = e2b.create()) {
      HttpClient http = HttpClient.newHttpClient();
      for (String body : List.of("{\"count\":0}", "{\"count\":101}", "{\"timeout\":0}", "{\"timeout\":86401}", "{\"count\":\"two\"}")) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.apiUrl() + "/sandboxes/" + parent.id() + "/fork"))
            .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s answered %s", body, r.body()).isEqualTo(400);
      }
      assertThat(containersOfThisServer()).hasSize(1);
      parent.pause();
      assertThatThrownBy(() -> e2b.fork(parent.id(), 1, Duration.ofSeconds(30)))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> {
            assertThat(e.statusCode()).isEqualTo(409);
            assertThat(e.getMessage()).contains("paused");
          });
      assertThat(containersOfThisServer()).hasSize(1);
    }
    assertThatThrownBy(() -> e2b.fork("doesnotexist00000000", 1, Duration.ofSeconds(30))).isInstanceOf(SandboxNotFoundException.class);
  }
}
