package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The warm pool, against a real server, real Docker and real HTTP. */
class WarmPoolTest {

  private static final Duration FILL = Duration.ofSeconds(90);

  private static LocalServer server(int pool) {
    return LocalServer.builder().warmPool(pool).build().start();
  }

  private static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  private static int ready(LocalServer s) {
    return s.registry().poolStatus().get("base")[0];
  }

  private static void awaitReady(LocalServer s, int n) {
    await().atMost(FILL).pollInterval(Duration.ofMillis(100)).until(() -> ready(s) >= n);
  }

  /** What a process in the sandbox sees of who and where it is. */
  private static String probe(LiveSandbox s) {
    return s.exec("echo \"$(hostname)|$(cat /etc/hostname)|$(grep -c \"$(hostname)\" /etc/hosts)|$(whoami)|$(id -u)|$(pwd)|$HOME"
        + "|${GREETING-unset}|$(env | cut -d= -f1 | grep -v '^GREETING$' | sort | tr '\\n' ,)\"").stdout().strip();
  }

  @Test
  @DisplayName("a claimed member is a sandbox like a cold one: id as hostname, user, env, metadata, info, files; and its container config carries no identity")
  void claimedLikeCold() throws Exception {
    try (LocalServer server = server(1); E2BSandboxProvider c = client(server); DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      awaitReady(server, 1);
      SandboxSpec spec = SandboxSpec.defaults().withEnv(Map.of("GREETING", "hi there")).withMetadata(Map.of("owner", "warm-test"));
      String volume = "warm-" + UUID.randomUUID().toString().substring(0, 8);
      String volumeId = e2b.createVolume(volume).volumeId();
      try (LiveSandbox warm = e2b.create(spec);
           LiveSandbox cold = e2b.create(new SandboxSpec(spec.template(), spec.timeout(), spec.env(), spec.metadata(),
               spec.onTimeout(), false, List.of(new VolumeMount(volume, "/mnt/v"))))) {
        LocalSandbox w = server.registry().find(warm.id()).orElseThrow();
        LocalSandbox k = server.registry().find(cold.id()).orElseThrow();
        assertThat(w.pooled()).as("the first create takes the ready member").isTrue();
        assertThat(k.pooled()).as("a create with volume mounts starts cold").isFalse();

        String pw = probe(warm);
        String pk = probe(cold);
        assertThat(pw).startsWith(warm.id() + "|" + warm.id() + "|1|user|1000|/home/user|/home/user|hi there|");
        assertThat(pk).startsWith(cold.id() + "|" + cold.id() + "|1|user|1000|/home/user|/home/user|hi there|");
        assertThat(pw.substring(pw.lastIndexOf('|'))).as("the same variables").isEqualTo(pk.substring(pk.lastIndexOf('|')));

        SandboxInfo iw = e2b.info(warm.id());
        SandboxInfo ik = e2b.info(cold.id());
        assertThat(iw.metadata()).isEqualTo(ik.metadata()).containsEntry("owner", "warm-test");
        assertThat(iw.templateId()).isEqualTo(ik.templateId());
        assertThat(iw.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(iw.cpuCount()).isEqualTo(ik.cpuCount());
        assertThat(iw.memoryMB()).isEqualTo(ik.memoryMB());
        assertThat(iw.startedAt()).isAfter(java.time.Instant.now().minusSeconds(60));
        assertThat(warm.envdVersion()).isEqualTo(cold.envdVersion());
        warm.writeFile("/home/user/a.txt", "warm");
        assertThat(warm.readFile("/home/user/a.txt")).isEqualTo("warm");
        assertThat(warm.exec("stat -c %U /home/user/a.txt").stdout()).isEqualTo("user\n");

        // nothing of the sandbox's identity in the member's container config
        var config = docker.client().inspectContainerCmd(w.instanceId()).exec().getConfig();
        assertThat(config.getLabels()).doesNotContainKeys(DockerRuntime.LABEL_SANDBOX_ID, DockerRuntime.LABEL_ENVD_TOKEN,
            DockerRuntime.LABEL_METADATA, DockerRuntime.LABEL_DEADLINE, "io.sandboxes.env");
        assertThat(config.getLabels().values()).noneMatch(v -> v.contains(w.envdToken()) || v.contains("warm-test"));
        assertThat(config.getEnv()).noneMatch(e -> e.startsWith("GREETING="));
        // once claimed it is renamed like a cold sandbox's container
        await().atMost(Duration.ofSeconds(10)).until(() ->
            docker.client().inspectContainerCmd(w.instanceId()).exec().getName().equals("/sandboxes-" + warm.id()));
      } finally {
        e2b.deleteVolume(volumeId);
      }
      awaitReady(server, 1); // refilled in the background
    }
  }

  @Test
  @DisplayName("16 concurrent creates against a pool of 4: 16 distinct sandboxes and containers, no member handed out twice, then refilled")
  void concurrentCreatesNeverShareAMember() throws Exception {
    try (LocalServer server = server(4); E2BSandboxProvider c = client(server)) {
      E2BApi e2b = c.api();
      awaitReady(server, 4);
      List<Callable<String>> creates = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        creates.add(() -> e2b.create().id());
      }
      List<String> ids = new ArrayList<>();
      try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
        for (Future<String> f : pool.invokeAll(creates)) {
          ids.add(f.get());
        }
      }
      Set<String> containers = new HashSet<>();
      int warm = 0;
      for (String id : ids) {
        LocalSandbox s = server.registry().find(id).orElseThrow();
        containers.add(s.instanceId());
        warm += s.pooled() ? 1 : 0;
      }
      assertThat(new HashSet<>(ids)).hasSize(16);
      assertThat(containers).as("one container per sandbox").hasSize(16);
      assertThat(warm).as("the 4 ready members (and any refilled meanwhile) were claimed").isGreaterThanOrEqualTo(4);
      for (String id : ids) {
        assertThat(e2b.connect(id).exec("hostname").stdout()).isEqualTo(id + "\n");
      }
      awaitReady(server, 4);
      for (String id : ids) {
        assertThat(e2b.kill(id)).isTrue();
      }
    }
  }

  @Test
  @DisplayName("a burst that empties the pool: no refill starts a member while its creates are under way, and the pool is full again after")
  void refillsWaitForABurst() throws Exception {
    String id = "warm-burst-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(1).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      awaitReady(server, 1);
      List<Callable<String>> creates = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        creates.add(() -> e2b.create().id());
      }
      java.time.Instant began = java.time.Instant.now();
      List<String> ids = new ArrayList<>();
      try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
        for (Future<String> f : pool.invokeAll(creates)) {
          ids.add(f.get());
        }
      }
      java.time.Instant answered = java.time.Instant.now();
      assertThat(ids.stream().filter(s -> server.registry().find(s).orElseThrow().pooled())).as("the ready member was claimed").isNotEmpty();
      awaitReady(server, 1);
      // every member made since the burst began was created (by Docker's clock, the same host's)
      // after the last of its creates had been answered, give or take the answer's way back, or
      // once the creates had kept the refill waiting its longest (WarmPool.MAX_YIELD, 10 s: a
      // loaded machine has taken 15 s for this burst)
      java.time.Instant yieldEnds = began.plusSeconds(10);
      // on a loaded machine the last answer has taken 0.9 s on its way back after the server was
      // done; by Docker's clock the last of the burst's containers started before its create ended
      java.time.Instant lastStarted = ids.stream()
          .map(s -> java.time.Instant.parse(docker.client().inspectContainerCmd(server.registry().find(s).orElseThrow().instanceId())
              .exec().getState().getStartedAt()))
          .max(java.util.Comparator.naturalOrder()).orElseThrow();
      List<java.time.Instant> madeSince = membersMadeSince(docker, id, began);
      assertThat(madeSince).as("the refill after the burst").isNotEmpty();
      assertThat(madeSince).allSatisfy(t -> assertThat(t.isAfter(lastStarted) || t.isAfter(answered.minusMillis(500))
          || !t.isBefore(yieldEnds))
          .as("member made at %s, burst %s .. %s, its last container started at %s", t, began, answered, lastStarted).isTrue());
      for (String s : ids) {
        e2b.kill(s);
      }
    }
  }

  private static int target(LocalServer s) {
    return s.registry().poolStatus().get("base")[1];
  }

  /** {@code n} creates at once: each on a thread of its own, all let go together. */
  private static List<String> burst(E2BApi e2b, int n) throws Exception {
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(n);
    List<Callable<String>> creates = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      creates.add(() -> {
        go.countDown();
        go.await();
        return e2b.create().id();
      });
    }
    List<String> ids = new ArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(n)) {
      for (Future<String> f : pool.invokeAll(creates)) {
        ids.add(f.get());
      }
    }
    return ids;
  }

  /** The server's unclaimed members as Docker lists them. */
  private static long membersInDocker(DockerRuntime docker, String serverId) {
    return docker.listOurs().stream().filter(k -> serverId.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER))
        && k.getNames()[0].startsWith("/sandboxes-pool-")).count();
  }

  @Test
  @DisplayName("the target rises with a burst of creates and the pool refills to it, never past the maximum")
  void targetFollowsDemandUpToTheMaximum() throws Exception {
    String id = "warm-grow-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(1).warmPoolMax(5).build().start();
         E2BSandboxProvider c = client(server); DockerRuntime docker = DockerRuntime.connect()) {
      server.registry().warmPoolPeriodsForTesting(Duration.ofMinutes(10), Duration.ofMinutes(10)); // every create counts
      E2BApi e2b = c.api();
      awaitReady(server, 1);
      assertThat(target(server)).as("the floor before any create").isEqualTo(1);
      List<String> ids = new ArrayList<>(burst(e2b, 3));
      assertThat(target(server)).as("three creates ask for three").isEqualTo(3);
      awaitReady(server, 3);
      assertThat(membersInDocker(docker, id)).as("the members Docker holds").isEqualTo(3);
      ids.addAll(burst(e2b, 8));
      assertThat(target(server)).as("eleven creates, capped at the maximum").isEqualTo(5);
      awaitReady(server, 5);
      // no member beyond the cap arrives later either
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
          .until(() -> ready(server) == 5 && membersInDocker(docker, id) == 5);
      for (String s : ids) {
        e2b.kill(s);
      }
    }
  }

  @Test
  @DisplayName("without a maximum given, a pool may grow to what a 64th of the engine's memory holds at 8 MiB a member (16 to 64);"
      + " one given wins; GET /local/server reports it")
  void defaultMaximumFollowsTheEnginesMemory() throws Exception {
    long memTotal;
    try (DockerRuntime docker = DockerRuntime.connect()) {
      memTotal = io.sandboxes.e2b.internal.Json.parse(docker.getJson("/info", 4 << 20)).path("MemTotal").asLong();
    }
    assertThat(memTotal).as("the engine reports its memory").isPositive();
    int expected = (int) Math.clamp(memTotal / 64 / (8L << 20), 16, 64);
    try (LocalServer byMemory = TestRuntime.builder().warmPool(0).build().start();
         LocalServer given = TestRuntime.builder().warmPool(0).warmPoolMax(5).build().start()) {
      assertThat(reportedMax(byMemory)).as("the default on an engine of %d MiB", memTotal >> 20).isEqualTo(expected);
      assertThat(byMemory.registry().warmPoolMax()).isEqualTo(expected);
      assertThat(reportedMax(given)).isEqualTo(5);
    }
  }

  private static int reportedMax(LocalServer server) throws Exception {
    try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
      var answer = http.send(java.net.http.HttpRequest.newBuilder(server.apiUrl().resolve("/local/server"))
          .header("X-API-KEY", server.apiKey()).build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());
      assertThat(answer.statusCode()).isEqualTo(200);
      return io.sandboxes.e2b.internal.Json.parse(answer.body()).path("warmPoolMax").asInt(-1);
    }
  }

  @Test
  @DisplayName("once creates stop for the quiet period, the target falls back to the floor and the surplus members are removed")
  void surplusRemovedWhenDemandStops() throws Exception {
    String id = "warm-shrink-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(1).warmPoolMax(4).build().start();
         E2BSandboxProvider c = client(server); DockerRuntime docker = DockerRuntime.connect()) {
      server.registry().warmPoolPeriodsForTesting(Duration.ofMinutes(10), Duration.ofMinutes(10));
      E2BApi e2b = c.api();
      awaitReady(server, 1);
      List<String> ids = burst(e2b, 4);
      assertThat(target(server)).isEqualTo(4);
      for (String s : ids) {
        e2b.kill(s);
      }
      awaitReady(server, 4);
      assertThat(membersInDocker(docker, id)).isEqualTo(4);
      // the quiet period, shortened: no create has come for longer than it now
      server.registry().warmPoolPeriodsForTesting(Duration.ofMinutes(10), Duration.ofSeconds(1));
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .until(() -> target(server) == 1 && ready(server) == 1 && membersInDocker(docker, id) == 1);
    }
  }

  @Test
  @DisplayName("a refill starts more than one member at once")
  void refillStartsMembersInParallel() throws Exception {
    try (LocalServer server = server(4)) {
      awaitReady(server, 4);
      assertThat(server.registry().warmPoolPeakParallelStartsForTesting()).as("members being started at the same moment")
          .isGreaterThanOrEqualTo(2);
    }
  }

  @Test
  @DisplayName("a well-stocked pool refills once the claimed sandbox's calls pause, not beside them; a pool run low refills beside them")
  void refillGivesWayToCalls() throws Exception {
    String id = "warm-calls-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(4).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      awaitReady(server, 4);
      java.time.Instant began = java.time.Instant.now();
      try (LiveSandbox s = e2b.create()) {
        // the refill of the one member claimed (3 of 4 ready) waits for the commands
        refillWaitsForCommands(server, docker, s, began, 4);

        // three more creates leave one ready, a quarter of the target: the refill no longer waits
        List<LiveSandbox> more = new ArrayList<>();
        more.add(e2b.create());
        more.add(e2b.create());
        java.time.Instant low = java.time.Instant.now();
        more.add(e2b.create());
        long deadline = System.nanoTime() + FILL.toNanos();
        List<java.time.Instant> beside = List.of();
        while (beside.isEmpty()) {
          assertThat(System.nanoTime()).as("no member made in %s of commands back to back with the pool low", FILL).isLessThan(deadline);
          for (int i = 0; i < 10; i++) {
            assertThat(s.exec("echo hi").stdout()).isEqualTo("hi\n");
          }
          beside = membersMadeSince(docker, id, low);
        }
        // at once, not after the 10 s a refill waits at most (WarmPool.MAX_YIELD) for the callers' calls
        assertThat(beside.stream().min(java.util.Comparator.naturalOrder()).orElseThrow())
            .as("the first member made with the pool low").isBefore(low.plusSeconds(8));
        more.forEach(LiveSandbox::close);
      }
    }
  }

  @Test
  @DisplayName("a burst that empties the pool: its refill gives way to the burst's first commands, but for no more than a second")
  void emptiedPoolGivesWayToTheBurstsCommandsForASecond() throws Exception {
    String id = "warm-empty-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(2).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      awaitReady(server, 2);
      burstBesideUnbrokenCalls(server, e2b, docker, id, 2, ids -> assertThat(ids)
          .allSatisfy(s -> assertThat(server.registry().find(s).orElseThrow().pooled()).isTrue()));
    }
  }

  /**
   * A burst of {@code n} creates while the callers' calls never pause from before it on (a call
   * is held across the client's own gaps, then each command from before the one before it ends,
   * as in refillWaitsForCommands, for 3 s): the members its refill makes come not beside its
   * first commands, but a second (WarmPool.EMPTY_CALLS_WAIT) after it began; nor only once the
   * calls paused, or after the 10 s any refill waits at most (MAX_YIELD).
   */
  private static void burstBesideUnbrokenCalls(LocalServer server, E2BApi e2b, DockerRuntime docker, String serverId, int n,
      java.util.function.Consumer<List<String>> claimed) throws Exception {
    Runnable held = server.registry().callBegins();
    java.time.Instant began = java.time.Instant.now();
    List<String> ids = burst(e2b, n);
    claimed.accept(ids);
    LiveSandbox s = e2b.connect(ids.get(0), Duration.ofMinutes(5));
    commandsAsUnbrokenCalls(server, s, held, Duration.ofSeconds(3));
    java.time.Instant callsEnded = java.time.Instant.now();
    List<java.time.Instant> made = membersMadeSince(docker, serverId, began);
    assertThat(made).as("members made while the calls went on, burst at %s, calls ended %s", began, callsEnded)
        .isNotEmpty()
        .allSatisfy(t -> assertThat(t).isAfter(began.plusMillis(900)))
        .anySatisfy(t -> assertThat(t).isBefore(callsEnded.minusMillis(500)));
    for (String k : ids) {
      e2b.kill(k);
    }
  }

  @Test
  @DisplayName("a burst that leaves the pool low: its refill gives way to the burst's first commands too, for no more than a second")
  void lowPoolAfterABurstGivesWayToItsCommandsForASecond() throws Exception {
    String id = "warm-low-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(10).warmPoolMax(10).build().start();
         E2BSandboxProvider c = client(server); DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi e2b = c.api();
      awaitReady(server, 10);
      // eight at once beside a call under way (a burst, WarmPool.BURST_CREATES) leave two of ten:
      // not empty, not well stocked
      burstBesideUnbrokenCalls(server, e2b, docker, id, 8, ids -> assertThat(ready(server)).isEqualTo(2));
    }
  }

  @Test
  @DisplayName("the default pool of two, one short after a claim, refills once the claimed sandbox's commands pause, not beside them")
  void poolOfTwoRefillsAfterTheFirstCommands() throws Exception {
    String id = "warm-two-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer server = LocalServer.builder().serverId(id).warmPool(2).build().start(); E2BSandboxProvider c = client(server);
         DockerRuntime docker = DockerRuntime.connect()) {
      awaitReady(server, 2);
      java.time.Instant began = java.time.Instant.now();
      try (LiveSandbox s = c.api().create()) {
        refillWaitsForCommands(server, docker, s, began, 2);
      }
    }
  }

  /**
   * Runs {@code echo hi} in {@code s} back to back for {@code during}, the server counting a
   * caller's call under way throughout: {@code held} (begun by the caller) until the first
   * command has answered, then each command's call from just before the one before it ends, so
   * that the client's own gaps do not end it; the last call ends on return.
   *
   * @return how many commands ran
   */
  private static int commandsAsUnbrokenCalls(LocalServer server, LiveSandbox s, Runnable held, Duration during) {
    long until = System.nanoTime() + during.toNanos();
    int runs = 0;
    while (System.nanoTime() < until) {
      assertThat(s.exec("echo hi").stdout()).isEqualTo("hi\n");
      Runnable next = server.registry().callBegins();
      held.run();
      held = next;
      runs++;
    }
    held.run();
    return runs;
  }

  /**
   * Runs 2 s of commands back to back in {@code s}, just claimed from the pool of {@code server}
   * (the server id is its Docker label), as a test does with the sandbox it just made, then checks
   * that no member was made while they ran (a member's start takes about 0.5 s) and that the pool
   * is back at {@code full} after them. Each command is also held as a call from just before the
   * one before it ends, so that a loaded machine's gaps between them (the client's own time) do not
   * end the wait: this checks the pool's side; callsCountWhileAnswered checks that the server
   * counts the commands themselves.
   */
  private static void refillWaitsForCommands(LocalServer server, DockerRuntime docker, LiveSandbox s, java.time.Instant began,
      int full) {
    String id = server.serverId();
    int runs = commandsAsUnbrokenCalls(server, s, server.registry().callBegins(), Duration.ofSeconds(2));
    java.time.Instant callsEnded = java.time.Instant.now();
    assertThat(membersMadeSince(docker, id, began)).as("members made during %d commands, %s .. %s", runs, began, callsEnded)
        .allSatisfy(t -> assertThat(t).isAfter(callsEnded.minusMillis(50)));
    awaitReady(server, full);
    assertThat(membersMadeSince(docker, id, began)).as("the refill once the commands stopped").isNotEmpty();
  }

  @Test
  @DisplayName("a command counts as a call under way until its answer is complete, then no longer")
  void callsCountWhileAnswered() throws Exception {
    try (LocalServer server = server(0); E2BSandboxProvider c = client(server); LiveSandbox s = c.api().create()) {
      CompletableFuture<String> running = CompletableFuture.supplyAsync(() -> s.exec("sleep 0.6; echo done").stdout());
      await().atMost(Duration.ofSeconds(10)).until(() -> server.registry().callsUnderWayForTesting() >= 1 || running.isDone());
      assertThat(running).as("the command was seen under way before it ended").isNotDone();
      assertThat(running.get()).isEqualTo("done\n");
      await().atMost(Duration.ofSeconds(2)).until(() -> server.registry().callsUnderWayForTesting() == 0);
    }
  }

  /** When each member of the server's pool that Docker lists (claimed or not) made since {@code since} was created. */
  private static List<java.time.Instant> membersMadeSince(DockerRuntime docker, String serverId, java.time.Instant since) {
    return docker.client().listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(DockerRuntime.LABEL_SERVER, serverId, "io.sandboxes.pool-member", "true")).exec().stream()
        .map(k -> {
          try {
            return java.time.Instant.parse(docker.client().inspectContainerCmd(k.getId()).exec().getCreated());
          } catch (com.github.dockerjava.api.exception.NotFoundException gone) {
            // removed between the listing and its inspect (a claimed sandbox killed): the listing's time, in whole seconds
            return java.time.Instant.ofEpochSecond(k.getCreated());
          }
        })
        .filter(t -> t.isAfter(since))
        .toList();
  }

  private static void policy(LocalServer server, String sandboxId, String json) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId + "/network"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
  }

  private static String createWithNetwork(LocalServer server, String network) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\",\"timeout\":120"
              + (network == null ? "" : ",\"network\":" + network) + "}")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
      return io.sandboxes.e2b.internal.Json.parse(r.body().getBytes(java.nio.charset.StandardCharsets.UTF_8))
          .get("sandboxID").asText();
    }
  }

  @Test
  @DisplayName("policy before hand-out: a claimed member with no policy reaches nothing; one created with an allow-list reaches the allowed witness only")
  void policyAppliedAtClaim() throws Exception {
    try (LocalServer server = server(2); E2BSandboxProvider c = client(server)) {
      org.junit.jupiter.api.Assumptions.assumeTrue(server.egressEnforced(), "egress needs root, nsenter and iptables");
      E2BApi e2b = c.api();
      awaitReady(server, 2);
      var p = server.egressProbe();
      String curl = "curl -s -o /dev/null -m 5 -w '%{http_code}' http://";
      String closed = createWithNetwork(server, null);
      String open = createWithNetwork(server, "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
      assertThat(server.registry().find(closed).orElseThrow().pooled()).isTrue();
      assertThat(server.registry().find(open).orElseThrow().pooled()).isTrue();
      try (DockerRuntime docker = DockerRuntime.connect()) {
        // members wait on "none"; only the claim whose policy allows something joins the sandbox network
        assertThat(docker.client().inspectContainerCmd(server.registry().find(closed).orElseThrow().instanceId()).exec()
            .getNetworkSettings().getNetworks()).containsOnlyKeys("none");
        assertThat(docker.client().inspectContainerCmd(server.registry().find(open).orElseThrow().instanceId()).exec()
            .getNetworkSettings().getNetworks()).containsOnlyKeys("sandboxes-egress");
      }
      assertThat(e2b.connect(closed).exec(curl + p.allowedHost() + "/").stdout()).isEqualTo("000");
      assertThat(e2b.connect(closed).exec(curl + p.rawIp() + "/").stdout()).isEqualTo("000");
      assertThat(e2b.connect(closed).exec("curl -s -o /dev/null -m 5 -w '%{http_code}' --noproxy '*' http://" + p.rawIp() + "/")
          .stdout()).as("the member's own firewall is deny-all").isEqualTo("000");
      assertThat(e2b.connect(open).exec(curl + p.allowedHost() + "/").stdout()).isEqualTo("200");
      assertThat(e2b.connect(open).exec(curl + p.deniedHost() + "/").stdout()).isNotEqualTo("200");
      assertThat(e2b.connect(open).exec("curl -s -o /dev/null -m 5 -w '%{http_code}' --noproxy '*' http://" + p.rawIp() + "/")
          .stdout()).isEqualTo("000");
      // and a policy set later still reaches the firewall of a claimed member
      policy(server, open, "{}");
      assertThat(e2b.connect(open).exec(curl + p.allowedHost() + "/").stdout()).isEqualTo("000");
      e2b.kill(closed);
      e2b.kill(open);
    }
  }

  /** The name Docker lists a container under, without its leading slash. */
  private static String dockerName(DockerRuntime docker, String sandboxId) {
    return docker.listOurs().stream().filter(k -> k.getNames()[0].endsWith("-" + sandboxId)).map(k -> k.getNames()[0].substring(1))
        .findFirst().orElse("(none)");
  }

  @Test
  @DisplayName("names: a claim alone is renamed at once; a burst's claims once the calls pause, within a second; a close that keeps them names them first")
  void claimedMembersTakeTheirSandboxesNames() throws Exception {
    String id = "warm-names-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    LocalServer server = LocalServer.builder().serverId(id).stateDir(state).keepSandboxesOnClose(true).warmPool(7).warmPoolMax(7)
        .build().start();
    try (DockerRuntime docker = DockerRuntime.connect()) {
      try (E2BSandboxProvider c = client(server)) {
        awaitReady(server, 7);
        LiveSandbox alone = c.api().create();
        assertThat(server.registry().renamesWaitingForTesting()).as("a claim alone does not wait").isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> dockerName(docker, alone.id()).equals("sandboxes-" + alone.id()));
        // a command held under way (3 s) while three creates claim at once: the renames wait for a
        // pause that does not come, so for their bound, and are made well before the command ends
        Thread held = Thread.ofVirtual().start(() -> alone.exec("sleep 3"));
        await().atMost(Duration.ofSeconds(10)).until(() -> server.registry().callsUnderWayForTesting() >= 1);
        List<String> first = burst(c.api(), 3);
        await().atMost(Duration.ofMillis(2_500)).pollInterval(Duration.ofMillis(50))
            .until(() -> first.stream().allMatch(s -> dockerName(docker, s).equals("sandboxes-" + s)));
        held.join();
        // again with the renames held back longer than the test lasts: the close makes them
        server.registry().renameWaitForTesting(Duration.ofMinutes(5));
        Thread heldAgain = Thread.ofVirtual().start(() -> {
          try {
            alone.exec("sleep 4");
          } catch (RuntimeException severedByTheClose) {
            // the server closes under it
          }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> server.registry().callsUnderWayForTesting() >= 1);
        List<String> second = burst(c.api(), 3);
        assertThat(server.registry().renamesWaitingForTesting()).isEqualTo(3);
        assertThat(second).allMatch(s -> dockerName(docker, s).equals("sandboxes-pool-" + s));
        server.close();
        assertThat(second).allMatch(s -> dockerName(docker, s).equals("sandboxes-" + s));
        heldAgain.join();
      }
    } finally {
      server.close();
      try (DockerRuntime docker = DockerRuntime.connect()) {
        docker.listOurs().stream().filter(k -> id.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)))
            .forEach(k -> docker.remove(k.getId()));
      }
    }
  }

  /** A container as a server that died mid-refill (or mid-claim, before the commit) leaves it. */
  private static String plantMember(DockerRuntime docker, String serverId, String name) {
    var labels = Map.of(DockerRuntime.LABEL_OURS, "true", DockerRuntime.LABEL_SERVER, serverId,
        DockerRuntime.LABEL_TEMPLATE, "base", "io.sandboxes.pool-member", "true");
    return docker.createAndStart(new DockerRuntime.ContainerSpec(
        io.sandboxes.local.internal.docker.BaseImage.reference(), name, labels, List.of(), "planted", 1, 64L << 20, 64, Map.of(), null));
  }

  /** The state file of sandbox {@code id} somewhere under the state folder {@code state}. */
  private static Path stateFileOf(Path state, String id) throws java.io.IOException {
    try (var files = Files.walk(state)) {
      return files.filter(p -> p.getFileName().toString().equals(id + ".json")).findFirst()
          .orElseThrow(() -> new AssertionError("no state file of " + id + " under " + state));
    }
  }

  @Test
  @DisplayName("restart: a claimed member comes back with its identity from the state file (twice); unclaimed and uncommitted members are removed")
  void restartKeepsClaimedRemovesUnclaimed() throws Exception {
    String id = "warm-restart-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    String key = "e2b_" + UUID.randomUUID().toString().replace("-", "");
    LocalServer.Builder b = LocalServer.builder().serverId(id).stateDir(state).apiKey(key).keepSandboxesOnClose(true).warmPool(1);
    String claimed;
    String token;
    try (DockerRuntime docker = DockerRuntime.connect()) {
      try (LocalServer first = b.build().start(); E2BSandboxProvider c = client(first)) {
        awaitReady(first, 1);
        LiveSandbox s = c.api().create(SandboxSpec.defaults().withEnv(Map.of("GREETING", "kept")).withMetadata(Map.of("k", "v")));
        claimed = s.id();
        assertThat(first.registry().find(claimed).orElseThrow().pooled()).isTrue();
        token = first.registry().find(claimed).orElseThrow().envdToken();
        // the state file that holds its token is its owner's alone, from its creation on: also
        // when a write cut short left a temporary file readable by all
        Path file = stateFileOf(state, claimed);
        assertThat(Files.readString(file)).contains(token);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        Path leftover = file.resolveSibling(claimed + ".json.tmp");
        Files.writeString(leftover, "cut short");
        Files.setPosixFilePermissions(leftover, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        c.api().setTimeout(claimed, Duration.ofMinutes(7));
        assertThat(Files.exists(leftover)).isFalse();
        assertThat(Files.readString(file)).contains(token);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        awaitReady(first, 1);
      }
      // closing removed the unclaimed member even though sandboxes are kept
      assertThat(docker.listOurs()).noneMatch(k -> id.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER))
          && k.getNames()[0].startsWith("/sandboxes-pool-"));
      // a server ended between a claim's commit and its rename leaves the pool's name: the next one renames it
      String claimedContainer = docker.listOurs().stream().filter(k -> k.getNames()[0].equals("/sandboxes-" + claimed)).findFirst()
          .orElseThrow().getId();
      docker.client().renameContainerCmd(claimedContainer).withName("sandboxes-pool-" + claimed).exec();
      // what a kill -9 leaves: a member mid-refill, and a member claimed but never committed (renamed, no state file)
      String midRefill = plantMember(docker, id, "sandboxes-pool-" + io.sandboxes.local.internal.Registry.newSandboxId());
      String midClaim = plantMember(docker, id, "sandboxes-" + io.sandboxes.local.internal.Registry.newSandboxId());
      for (int round = 0; round < 2; round++) {
        try (LocalServer again = b.build().start(); E2BSandboxProvider c = client(again)) {
          assertThat(docker.client().listContainersCmd().withShowAll(true).withIdFilter(List.of(midRefill, midClaim)).exec())
              .as("members nobody claimed are removed").isEmpty();
          LocalSandbox back = again.registry().find(claimed).orElseThrow();
          assertThat(dockerName(docker, claimed)).isEqualTo("sandboxes-" + claimed);
          assertThat(back.pooled()).isTrue();
          assertThat(back.envdToken()).isEqualTo(token);
          assertThat(c.api().info(claimed).metadata()).containsEntry("k", "v");
          assertThat(c.api().connect(claimed).exec("echo $GREETING; hostname").stdout()).isEqualTo("kept\n" + claimed + "\n");
          awaitReady(again, 1);
        }
      }
      try (LocalServer last = b.keepSandboxesOnClose(false).build().start(); E2BSandboxProvider c = client(last)) {
        assertThat(c.api().kill(claimed)).isTrue();
        assertThatThrownBy(() -> c.api().info(claimed)).isInstanceOf(SandboxNotFoundException.class);
      }
      assertThat(docker.listOurs()).noneMatch(k -> id.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)));
    } finally {
      // a failed run must not leave this test's containers behind
      try (DockerRuntime docker = DockerRuntime.connect()) {
        docker.listOurs().stream().filter(k -> id.equals(k.getLabels().get(DockerRuntime.LABEL_SERVER)))
            .forEach(k -> docker.remove(k.getId()));
      }
    }
  }
}
