package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.runtime.InstanceLabels;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Kill answers once the sandbox is unreachable and its removal finishes in the background
 * (issue 26): nothing reaches a killed sandbox once the kill has answered, nothing it held is left
 * once its removal is over, and a server stopped mid-removal hands the removal on to its restart.
 */
class KillTest {
  private static String serverId;
  private static Path state;
  private static LocalServer server;
  private static E2BSandboxProvider provider;
  private static DockerRuntime docker;

  @BeforeAll
  static void start() throws Exception {
    serverId = "kill-test-" + UUID.randomUUID().toString().substring(0, 8);
    state = Files.createTempDirectory("sandboxes-kill-");
    server = TestRuntime.builder().serverId(serverId).stateDir(state).build().start();
    provider = client(server);
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
    if (docker != null) {
      removeLeftovers(serverId);
      docker.close();
    }
    deleteTree(state);
  }

  /** What a failed test left of one of this class's servers: its containers (found by the server's label) go. */
  private static void removeLeftovers(String server) {
    for (String c : containersOf(server)) {
      docker.remove(c);
    }
  }

  private static void deleteTree(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException e) {
      // a temporary folder: best effort
    }
  }

  private static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  /** The ids of the containers Docker holds for a server, found by its labels. */
  private static Set<String> containersOf(String server) {
    return docker.client().listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, server)).exec().stream()
        .map(com.github.dockerjava.api.model.Container::getId).collect(Collectors.toSet());
  }

  private static HttpResponse<String> send(HttpRequest.Builder r) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  /** A request to a sandbox's envd (its port 49983) or one of its ports, through the server's sandbox URL. */
  private static HttpRequest.Builder toSandbox(String id, int port, String path, String token) {
    return HttpRequest.newBuilder(server.sandboxUrl().resolve(path)).header("E2b-Sandbox-Id", id)
        .header("E2b-Sandbox-Port", Integer.toString(port)).header("X-Access-Token", token);
  }

  private static HttpRequest.Builder toApi(String method, String path) {
    return HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey())
        .header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(
            method.equals("POST") ? "{\"timeout\":60}" : ""));
  }

  private static HttpRequest.Builder listFiles(String id, String token) {
    return toSandbox(id, 49983, "/filesystem.Filesystem/ListDir", token).header("Content-Type", "application/json")
        .header("Authorization", "Basic dXNlcjo=").POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"/home/user\"}"));
  }

  @Test
  @DisplayName("once kill answers, the sandbox is not found by every call (info, list, envd, its ports, connect, resume, a second kill), "
      + "like an id that never existed; its container, state file and daemon folder go soon after")
  void unreachableOnceAnswered() throws Exception {
    E2BApi e2b = provider.api();
    LiveSandbox s = e2b.create();
    String id = s.id();
    String token = Tokens.envdToken(server, id);
    String container = server.registry().find(id).orElseThrow().instanceId();
    s.exec("cd /tmp && (nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)").orThrow();
    await().atMost(Duration.ofSeconds(20)).until(() -> send(toSandbox(id, 8000, "/", "").GET()).statusCode() == 200);
    assertThat(send(listFiles(id, token)).statusCode()).isEqualTo(200);
    assertThat(Files.readString(state.resolve(id + ".json"))).doesNotContain("killed");

    assertThat(e2b.kill(id)).isTrue();

    String unknown = "zzzzzzzzzzzzzzzzzzzz";
    assertThatThrownBy(() -> e2b.info(id)).isInstanceOf(SandboxNotFoundException.class);
    assertThat(e2b.listAll(SandboxQuery.all())).noneMatch(i -> i.id().equals(id));
    assertThatThrownBy(() -> e2b.connect(id)).isInstanceOf(SandboxNotFoundException.class);
    assertThatThrownBy(() -> s.exec("echo hi")).isInstanceOf(SandboxNotFoundException.class);
    assertThat(send(toApi("POST", "/sandboxes/" + id + "/resume")).statusCode()).isEqualTo(404);
    assertThat(send(toApi("POST", "/sandboxes/" + id + "/pause")).statusCode()).isEqualTo(404);
    assertThat(send(toApi("GET", "/sandboxes/" + id)).statusCode()).isEqualTo(404);
    assertThat(e2b.kill(id)).as("a second kill").isFalse();
    // envd and the sandbox's ports answer as they do for an id that never existed
    int envdUnknown = send(listFiles(unknown, token)).statusCode();
    assertThat(envdUnknown).isGreaterThanOrEqualTo(400);
    assertThat(send(listFiles(id, token)).statusCode()).isEqualTo(envdUnknown);
    int portUnknown = send(toSandbox(unknown, 8000, "/", "").GET()).statusCode();
    assertThat(portUnknown).isGreaterThanOrEqualTo(400);
    assertThat(send(toSandbox(id, 8000, "/", "").GET()).statusCode()).isEqualTo(portUnknown);

    // and nothing of it is left once the removal is over
    await().atMost(Duration.ofSeconds(60)).until(() -> !containersOf(serverId).contains(container));
    await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(state.resolve(id + ".json")));
    assertThat(state.resolve("envd").resolve(id)).doesNotExist();
  }

  @Test
  @DisplayName("kills of many sandboxes at once (running, memory-paused, filesystem-paused) all answer, and leave no container and no state")
  void manyAtOnceLeaveNothing() throws Exception {
    E2BApi e2b = provider.api();
    List<String> ids = new ArrayList<>();
    List<String> containers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      String id = e2b.create().id();
      ids.add(id);
      containers.add(server.registry().find(id).orElseThrow().instanceId());
    }
    assertThat(e2b.pause(ids.get(0), true)).isTrue();
    assertThat(e2b.pause(ids.get(1), false)).isTrue();
    assertThat(e2b.info(ids.get(1)).state()).isEqualTo(SandboxState.PAUSED);

    List<CompletableFuture<Boolean>> kills = ids.stream()
        .map(id -> CompletableFuture.supplyAsync(() -> e2b.kill(id), java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()))
        .toList();
    for (CompletableFuture<Boolean> k : kills) {
      assertThat(k.get(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    }
    for (String id : ids) {
      assertThatThrownBy(() -> e2b.info(id)).isInstanceOf(SandboxNotFoundException.class);
    }
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> assertThat(containersOf(serverId)).doesNotContainAnyElementsOf(containers));
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(ids).noneMatch(id -> Files.exists(state.resolve(id + ".json"))));
    assertThat(ids).noneMatch(id -> Files.exists(state.resolve("envd").resolve(id)));
  }

  @Test
  @DisplayName("what a killed sandbox runs stops when kill answers, though its container's removal waits while calls go on; it goes once they pause")
  void killedStopsWhileRemovalWaits() throws Exception {
    E2BApi e2b = provider.api();
    String volume = "kill-" + UUID.randomUUID().toString().substring(0, 8);
    String volumeId = e2b.createVolume(volume).volumeId();
    io.sandboxes.SandboxSpec d = io.sandboxes.SandboxSpec.defaults();
    io.sandboxes.SandboxSpec mounted = new io.sandboxes.SandboxSpec(d.template(), d.timeout(), d.env(), d.metadata(), d.onTimeout(),
        false, List.of(new io.sandboxes.VolumeMount(volume, "/mnt/v")));
    try (LiveSandbox reader = e2b.create(mounted)) {
      LiveSandbox writer = e2b.create(mounted);
      String container = server.registry().find(writer.id()).orElseThrow().instanceId();
      // a writer in the background, as a hostile (or merely busy) sandbox leaves one: a count to the shared volume
      writer.exec("setsid sh -c 'i=0; while :; do i=$((i+1)); echo $i > /mnt/v/tick.tmp; mv /mnt/v/tick.tmp /mnt/v/tick;"
          + " sleep 0.01; done' > /dev/null 2>&1 < /dev/null &");
      await().atMost(Duration.ofSeconds(10)).until(() -> tick(reader) > 5);
      Path freezer = freezerOf(container); // where the server can freeze a container itself, its removal waits for calls to pause
      // calls back to back from before the kill to 3 s after it, as a suite's next test makes them
      List<long[]> seen = java.util.Collections.synchronizedList(new ArrayList<>());
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      CompletableFuture<Void> calls = CompletableFuture.runAsync(() -> {
        // each also held as a call from just before the one before it ends: a loaded machine's gaps
        // between them (the client's own time) then do not end the removal's wait
        Runnable held = server.registry().callBegins();
        while (!stop.get()) {
          seen.add(new long[] {System.nanoTime(), tick(reader)});
          Runnable next = server.registry().callBegins();
          held.run();
          held = next;
        }
        held.run();
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() >= 3);
      long killed;
      try {
        assertThat(e2b.kill(writer.id())).isTrue();
        killed = System.nanoTime();
        if (freezer != null) {
          await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(Files.readString(freezer).strip())
              .as("the killed sandbox's container while its removal waits").isIn("FROZEN", "1"));
          // about 0.1 s when the removal does not wait (it waits for 150 ms without a call, at most 5 s)
          await().during(Duration.ofSeconds(2)).atMost(Duration.ofMillis(4500))
              .until(() -> containersOf(serverId).contains(container));
        } else {
          await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() > 0 && seen.getLast()[0] - killed > 3_000_000_000L);
        }
      } finally {
        stop.set(true);
        calls.join();
      }
      // the writer may finish a step or two as the kill lands; from 0.3 s on nothing in it runs
      List<Long> after = seen.stream().filter(v -> v[0] - killed > 300_000_000L).map(v -> v[1]).distinct().toList();
      assertThat(after).as("the counts the killed sandbox's writer left, read from 0.3 s after the kill on").hasSize(1);
      await().atMost(Duration.ofSeconds(30)).until(() -> !containersOf(serverId).contains(container));
    } finally {
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
        e2b.deleteVolume(volumeId);
        return true;
      });
    }
  }

  /** The count the writer left on the shared volume, read by another sandbox. */
  private static long tick(LiveSandbox reader) {
    String out = reader.exec("cat /mnt/v/tick 2>/dev/null || echo 0").stdout().strip();
    return Long.parseLong(out.isEmpty() ? "0" : out);
  }

  /** The host's freezer control of a container's cgroup (cgroup v1 or v2, Docker's default parents), or null when not found. */
  private static @org.jspecify.annotations.Nullable Path freezerOf(String container) {
    for (String p : List.of("/sys/fs/cgroup/freezer/docker/" + container + "/freezer.state",
        "/sys/fs/cgroup/freezer/system.slice/docker-" + container + ".scope/freezer.state",
        "/sys/fs/cgroup/docker/" + container + "/cgroup.freeze",
        "/sys/fs/cgroup/system.slice/docker-" + container + ".scope/cgroup.freeze")) {
      if (Files.isWritable(Path.of(p))) {
        return Path.of(p);
      }
    }
    return null;
  }

  @Test
  @DisplayName("what a killed sandbox used can be deleted as soon as the kill answers: its volume (deletion waits for the removal under way)")
  void killThenDeleteVolume() {
    E2BApi e2b = provider.api();
    String volume = "kill-" + UUID.randomUUID().toString().substring(0, 8);
    String volumeId = e2b.createVolume(volume).volumeId();
    boolean deleted = false;
    try {
      io.sandboxes.SandboxSpec d = io.sandboxes.SandboxSpec.defaults();
      LiveSandbox s = e2b.create(new io.sandboxes.SandboxSpec(d.template(), d.timeout(), d.env(), d.metadata(), d.onTimeout(), false,
          List.of(new io.sandboxes.VolumeMount(volume, "/mnt/v"))));
      s.writeFile("/mnt/v/a.txt", "a");
      assertThat(e2b.kill(s.id())).isTrue();
      e2b.deleteVolume(volumeId);
      deleted = true;
    } finally {
      if (!deleted) {
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
          e2b.deleteVolume(volumeId);
          return true;
        });
      }
    }
  }

  @Test
  @DisplayName("deleting a volume a killed sandbox mounted removes that sandbox's container itself when the background has not begun it, "
      + "and neither waits for nor removes other killed sandboxes")
  void deleteVolumeFinishesItsOwnRemoval() throws Exception {
    E2BApi e2b = provider.api();
    String volume = "kill-held-" + UUID.randomUUID().toString().substring(0, 8);
    String volumeId = e2b.createVolume(volume).volumeId();
    io.sandboxes.SandboxSpec d = io.sandboxes.SandboxSpec.defaults();
    LiveSandbox user = e2b.create(new io.sandboxes.SandboxSpec(d.template(), d.timeout(), d.env(), d.metadata(), d.onTimeout(), false,
        List.of(new io.sandboxes.VolumeMount(volume, "/mnt/v"))));
    LiveSandbox other = e2b.create();
    String userContainer = server.registry().find(user.id()).orElseThrow().instanceId();
    String otherContainer = server.registry().find(other.id()).orElseThrow().instanceId();
    AutoCloseable held = server.registry().holdRemovalsForTesting(Duration.ofSeconds(60));
    try {
      assertThat(e2b.kill(other.id())).isTrue();
      assertThat(e2b.kill(user.id())).isTrue();
      assertThat(containersOf(serverId)).as("both removals are held back").contains(userContainer, otherContainer);
      long t0 = System.nanoTime();
      e2b.deleteVolume(volumeId);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the deletion removed the container it needed gone itself")
          .isLessThan(Duration.ofSeconds(15));
      assertThat(containersOf(serverId)).doesNotContain(userContainer).as("the other removal still waits").contains(otherContainer);
    } finally {
      held.close();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> !containersOf(serverId).contains(otherContainer));
  }

  @Test
  @DisplayName("kill answers while Docker has not removed the container yet; a server stopped before the removal is over hands it on: "
      + "its restart removes the container, and the killed sandbox never comes back (a live one does)")
  void removalCutShortIsFinishedByARestart() throws Exception {
    String id = "kill-restart-" + UUID.randomUUID().toString().substring(0, 8);
    Path dir = Files.createTempDirectory("sandboxes-kill-restart-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    AutoCloseable held = null;
    try {
      String killed;
      String kept;
      String killedContainer;
      LocalServer first = TestRuntime.builder().serverId(id).stateDir(dir).apiKey(key).keepSandboxesOnClose(true).build().start();
      try (E2BSandboxProvider c1 = client(first)) {
        E2BApi e2b = c1.api();
        killed = e2b.create().id();
        kept = e2b.create().id();
        killedContainer = first.registry().find(killed).orElseThrow().instanceId();
        held = first.registry().holdRemovalsForTesting(Duration.ofMillis(200));
        long t0 = System.nanoTime();
        assertThat(e2b.kill(killed)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("kill answers without waiting for Docker").isLessThan(Duration.ofSeconds(5));
        assertThatThrownBy(() -> e2b.info(killed)).isInstanceOf(SandboxNotFoundException.class);
        assertThat(containersOf(id)).as("the container is still there: its removal waits").contains(killedContainer);
        assertThat(Files.readString(dir.resolve(killed + ".json"))).as("marked killed before the kill answered").contains("\"killed\":true");
      } finally {
        first.close(); // waits 200 ms for the held removal, then hands it on
      }
      assertThat(containersOf(id)).as("the removal was cut short").contains(killedContainer);
      try (LocalServer second = TestRuntime.builder().serverId(id).stateDir(dir).apiKey(key).build().start();
          E2BSandboxProvider c2 = client(second)) {
        E2BApi e2b = c2.api();
        assertThatThrownBy(() -> e2b.info(killed)).isInstanceOf(SandboxNotFoundException.class);
        assertThatThrownBy(() -> e2b.connect(killed)).isInstanceOf(SandboxNotFoundException.class);
        assertThat(e2b.listAll(SandboxQuery.all())).extracting(io.sandboxes.SandboxInfo::id).contains(kept).doesNotContain(killed);
        assertThat(e2b.info(kept).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(containersOf(id)).doesNotContain(killedContainer);
        assertThat(dir.resolve(killed + ".json")).doesNotExist();
      }
      // the second server killed what it had at its close: nothing of this server id is left
      await().atMost(Duration.ofSeconds(30)).until(() -> containersOf(id).isEmpty());
    } finally {
      if (held != null) {
        held.close();
      }
      removeLeftovers(id);
      deleteTree(dir);
    }
  }
}
