package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.SandboxState;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A server started again with the same id takes its sandboxes back, reporting only what Docker shows. */
class RestartTest {

  private static LocalServer server(String id, Path state, String key) {
    return LocalServer.builder().serverId(id).stateDir(state).apiKey(key).keepSandboxesOnClose(true).build().start();
  }

  static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  @Test
  @DisplayName("running, memory-paused and filesystem-paused sandboxes come back as they are; a memory-keeping pause whose container a Docker restart stopped comes back paused with its files, its memory lost")
  void restart() throws Exception {
    String id = "restart-test-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    String running;
    String frozen;
    String stopped;
    String lost;
    String lostContainer;
    String lostPid;
    String pid;
    long worker;
    int kept;
    try (LocalServer first = server(id, state, key); E2BSandboxProvider c1 = client(first)) {
      E2BApi e2b = c1.api();
      running = e2b.create().id();
      // every sandbox starts with its daemon, connected by the time create answers
      assertThat(first.registry().find(running).orElseThrow().daemonConnected()).isTrue();
      worker = first.registry().find(running).orElseThrow().daemon().hello().workerPid();
      // a process started through this server, which must outlive it
      io.sandboxes.local.internal.SandboxProcess.Subscriber[] sub = new io.sandboxes.local.internal.SandboxProcess.Subscriber[1];
      kept = first.registry().find(running).orElseThrow().start(new io.sandboxes.local.internal.LocalSandbox.StartSpec("user",
          "sleep", java.util.List.of("600"), java.util.Map.of(), null, "kept", false, 0, 0, false, java.time.Duration.ZERO), sub).pid();
      LiveSandbox f = e2b.create();
      pid = f.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      f.pause();
      frozen = f.id();
      LiveSandbox st = e2b.create();
      st.writeFile("/home/user/kept.txt", "kept");
      e2b.pause(st.id(), false);
      stopped = st.id();
      LiveSandbox l = e2b.create();
      l.writeFile("/home/user/kept.txt", "kept through a Docker restart");
      lostPid = l.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      l.pause();
      lost = l.id();
      lostContainer = first.registry().find(lost).orElseThrow().instanceId();
    }
    DockerRuntime docker = DockerRuntime.connect();
    // what a Docker restart does to a frozen container (dockerd unpauses and stops every container
    // as it shuts down, live-restore off; a second dockerd 20.10 of its own, restarted by hand, left
    // a paused container Exited (137), not paused, with its files): its memory is gone, its files are not
    docker.client().unpauseContainerCmd(lostContainer).exec();
    docker.client().stopContainerCmd(lostContainer).withTimeout(1).exec();

    try (LocalServer second = server(id, state, key); E2BSandboxProvider c2 = client(second)) {
      E2BApi e2b = c2.api();
      assertThat(e2b.info(running).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(e2b.info(frozen).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.info(stopped).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.info(lost).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.listAll(io.sandboxes.e2b.SandboxQuery.all().withStates(java.util.Set.of(SandboxState.PAUSED))))
          .as("listed as paused").anySatisfy(i -> assertThat(i.id()).isEqualTo(lost));
      assertThat(docker.isRunning(lostContainer)).isFalse();
      assertThat(second.registry().find(lost).orElseThrow().memoryKept()).as("the memory is not claimed kept").isFalse();
      assertThat(Files.readString(state.resolve(lost + ".json"))).contains("\"memoryKept\":false");

      // the restarted server listens again in the same folder and the same worker connects to it
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .until(() -> second.registry().find(running).orElseThrow().daemonConnected());
      io.sandboxes.local.internal.daemon.DaemonConnection conn = second.registry().find(running).orElseThrow().daemon();
      conn.ping();
      assertThat(conn.hello().workerPid()).isEqualTo(worker);
      assertThat(conn.hello().generation()).isZero();
      // the process the first server started is listed, found by its tag and signalled again
      io.sandboxes.local.internal.LocalSandbox back = second.registry().find(running).orElseThrow();
      assertThat(back.running()).anySatisfy(p -> {
        assertThat(p.pid()).isEqualTo(kept);
        assertThat(p.cmd()).isEqualTo("sleep");
        assertThat(p.args()).containsExactly("600");
      });
      io.sandboxes.local.internal.SandboxProcess sleeper = back.processByTag("kept");
      assertThat(sleeper).isNotNull();
      io.sandboxes.local.internal.SandboxProcess.Subscriber watcher = sleeper.subscribe();
      back.signal(sleeper, 9);
      io.sandboxes.local.internal.SandboxProcess.Event ended = null;
      for (int i = 0; i < 100 && !(ended instanceof io.sandboxes.local.internal.SandboxProcess.End); i++) {
        ended = watcher.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS);
      }
      assertThat(ended).isInstanceOfSatisfying(io.sandboxes.local.internal.SandboxProcess.End.class,
          e -> assertThat(e.status()).isEqualTo("signal: killed"));

      LiveSandbox f = e2b.connect(frozen);
      assertThat(f.exec("ps -o args= -p " + pid).stdout()).isEqualTo("sleep 600\n");
      assertThat(e2b.connect(stopped).readFile("/home/user/kept.txt")).isEqualTo("kept");
      assertThat(e2b.connect(running).exec("echo back").stdout()).isEqualTo("back\n");
      // connect boots it from its files: they are there, the processes of its pause are not
      LiveSandbox booted = e2b.connect(lost);
      assertThat(booted.readFile("/home/user/kept.txt")).isEqualTo("kept through a Docker restart");
      assertThat(booted.exec("ps -o args= -p " + lostPid + " || true").stdout()).doesNotContain("sleep 600");
      assertThat(e2b.info(lost).state()).isEqualTo(SandboxState.RUNNING);
      for (String s : new String[] {running, frozen, stopped, lost}) {
        assertThat(e2b.kill(s)).isTrue();
      }
      // nothing left of them once their removals (in the background, after the kills answered) are over:
      // no container, no state file
      java.util.Set<String> gone = java.util.Set.of(running, frozen, stopped, lost);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).untilAsserted(() -> {
        assertThat(docker.listOurs()).noneMatch(c -> c.getLabels() != null && gone.contains(String.valueOf(c.getLabels().get("io.sandboxes.sandbox-id"))));
        assertThat(gone).noneMatch(g -> Files.exists(state.resolve(g + ".json")));
      });
    }
  }

  @Test
  @DisplayName("a Docker restart under a running server (the frozen container unpaused and stopped, as dockerd's shutdown does): the sandbox stays paused with its files, not ended; connect boots it from them")
  void memoryLostWhileServing() throws Exception {
    try (LocalServer server = LocalServer.builder().build().start(); E2BSandboxProvider c = client(server);
        DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      LiveSandbox s = e2b.create();
      String id = s.id();
      s.writeFile("/home/user/kept.txt", "kept");
      String pid = s.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      assertThat(s.pause()).isTrue();
      String container = server.registry().find(id).orElseThrow().instanceId();
      docker.client().unpauseContainerCmd(container).exec();
      docker.client().stopContainerCmd(container).withTimeout(1).exec();
      // the server follows Docker's events: the pause loses its memory claim, and the sandbox is not ended
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
          .until(() -> server.registry().find(id).map(x -> !x.memoryKept()).orElse(true));
      assertThat(server.registry().find(id)).as("still a sandbox of the server").isPresent();
      assertThat(server.registry().endedFromOutside(id)).isEmpty();
      assertThat(e2b.info(id).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(server.registry().find(id).orElseThrow().logLines()).anySatisfy(l -> assertThat(l.message()).contains("memory of its pause is lost"));
      LiveSandbox back = e2b.connect(id);
      assertThat(back.readFile("/home/user/kept.txt")).isEqualTo("kept");
      assertThat(back.exec("ps -o args= -p " + pid + " || true").stdout()).doesNotContain("sleep 600");
      assertThat(e2b.kill(id)).isTrue();
      // removed in the background, soon after the kill answered
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60))
          .until(() -> docker.listOurs().stream().noneMatch(x -> x.getId().equals(container)));
    }
  }

  @Test
  @DisplayName("a server with another id never takes or touches someone else's sandboxes")
  void otherServersLeftAlone() throws Exception {
    Path state = Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    String mine;
    try (LocalServer a = server("owner-" + UUID.randomUUID().toString().substring(0, 8), state, key);
         E2BSandboxProvider c3 = client(a)) {
      E2BApi e2b = c3.api();
      mine = e2b.create().id();
      try (LocalServer b = LocalServer.builder().apiKey(key).build().start(); E2BSandboxProvider other = client(b)) {
        assertThatThrownBy(() -> other.api().info(mine)).isInstanceOf(SandboxNotFoundException.class);
      }
      assertThat(e2b.info(mine).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(e2b.kill(mine)).isTrue();
    }
  }

  @Test
  @DisplayName("a create the server never committed (it stopped before recording and answering it) does not come back as a sandbox nobody knows about")
  void uncommittedCreateRemoved() throws Exception {
    String id = "uncommitted-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    String committed;
    String uncommitted;
    String container;
    try (LocalServer first = server(id, state, key); E2BSandboxProvider c1 = client(first)) {
      committed = c1.api().create().id();
      uncommitted = c1.api().create().id();
      container = first.registry().find(uncommitted).orElseThrow().instanceId();
      // as if the server had died after starting the container and before its commit: no state file
      Files.delete(state.resolve(uncommitted + ".json"));
    }
    try (LocalServer second = server(id, state, key); E2BSandboxProvider c2 = client(second);
         DockerRuntime docker = DockerRuntime.connect()) {
      assertThatThrownBy(() -> c2.api().info(uncommitted)).isInstanceOf(SandboxNotFoundException.class);
      assertThat(docker.client().listContainersCmd().withShowAll(true).withIdFilter(java.util.List.of(container)).exec())
          .as("the uncommitted sandbox's container is removed, not left to its deadline").isEmpty();
      assertThat(c2.api().info(committed).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(c2.api().kill(committed)).isTrue();
    }
  }
}
