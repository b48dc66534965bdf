package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.daemon.Budget;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The server facing a hostile daemon: in a real sandbox, root (a command run as root, as E2B lets
 * its user run one) stops the real daemon's worker and
 * runs {@code fake_daemon.py}, which connects to the mounted socket as anything in the sandbox
 * can, and answers the server's requests as badly as it likes. The server must keep its memory
 * for that sandbox bounded, answer every call within a deadline, and serve everyone else.
 *
 * <p>Isolated: the heap is measured, so no other test class runs meanwhile.
 */
@Isolated
@ExtendWith(SharedServer.class)
class HostileDaemonTest {
  /** The worker pid the fake daemon's HELLO names. */
  static final long FAKE_PID = 424242;
  /** Commands run as root in the sandbox, as hostile code there may. */
  private static final io.sandboxes.ExecOptions ROOT = io.sandboxes.ExecOptions.defaults().withUser("root");
  /** What the issue allows one sandbox to cost the server's memory. */
  private static final long SANDBOX_MEMORY = 64L << 20;

  /** Starts the fake daemon in the sandbox and waits until the server's connection is the fake's. */
  private static DaemonConnection takeOver(LocalServer server, LiveSandbox s, String mode) throws Exception {
    return takeOver(server, s, mode, "");
  }

  /**
   * Starts the fake daemon in the sandbox with {@code env} (shell assignments, such as
   * {@code FAKE_PROTOCOL=2}) and waits until the server's connection is the fake's.
   */
  static DaemonConnection takeOver(LocalServer server, LiveSandbox s, String mode, String env) throws Exception {
    byte[] script;
    try (InputStream in = HostileDaemonTest.class.getResourceAsStream("fake_daemon.py")) {
      script = in.readAllBytes();
    }
    s.writeBytes("/tmp/fake_daemon.py", script);
    // as root in the sandbox (here through the API: sudo is refused where no-new-privileges is set, as on gVisor)
    s.exec(env + " setsid python3 /tmp/fake_daemon.py " + mode + " > /tmp/fake.log 2>&1 < /dev/null &", ROOT);
    LocalSandbox local = server.registry().find(s.id()).orElseThrow();
    DaemonConnection[] fake = new DaemonConnection[1];
    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
      DaemonConnection c = local.daemon();
      fake[0] = c;
      return c.hello().workerPid() == FAKE_PID;
    });
    return fake[0];
  }

  /** The heap in use after a full collection. */
  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Samples the heap (after collections) for {@code duration}; returns the most it grew over {@code base}. */
  private static long heapGrowth(long base, Duration duration) {
    long most = 0;
    long end = System.nanoTime() + duration.toNanos();
    while (System.nanoTime() < end) {
      most = Math.max(most, heapAfterGc() - base);
      java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
    }
    return most;
  }

  /** A Start whose answer is never read: the client of a process that stopped reading. */
  private static Socket unreadStart(LocalServer server, String sandboxId) throws Exception {
    byte[] body = io.sandboxes.e2b.internal.Connect.envelope(0,
        "{\"process\":{\"cmd\":\"/bin/yes\"}}".getBytes(StandardCharsets.UTF_8));
    URI envd = server.sandboxUrl();
    Socket sock = new Socket(envd.getHost(), envd.getPort());
    sock.setReceiveBufferSize(4096);
    OutputStream out = sock.getOutputStream();
    String head = "POST /process.Process/Start HTTP/1.1\r\nHost: " + envd.getHost() + "\r\nE2b-Sandbox-Id: " + sandboxId
        + "\r\nX-Access-Token: " + Tokens.envdToken(server, sandboxId) + "\r\nContent-Type: application/connect+json\r\n"
        + "Connect-Protocol-Version: 1\r\nContent-Length: " + body.length + "\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
    return sock;
  }

  @Test
  @DisplayName("a daemon flooding zero-length output past its credit to a client that stopped reading is dropped; the server's heap grows by less than 64 MiB")
  void zeroLengthFlood(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "zero-flood");
      long base = heapAfterGc();
      try (Socket client = unreadStart(server, s.id())) {
        CompletableFuture<Long> growth = CompletableFuture.supplyAsync(() -> heapGrowth(base, Duration.ofSeconds(12)));
        await().atMost(Duration.ofSeconds(60)).until(() -> !fake.isOpen());
        assertThat(fake.closeReason()).contains("credit");
        assertThat(growth.get()).as("heap growth while flooded").isLessThan(SANDBOX_MEMORY);
        assertThat(fake.budget().peak()).isLessThanOrEqualTo(Budget.LIMIT);
      }
    }
  }

  @Test
  @DisplayName("a stat answered with two entries, or with a 1 MB name, is a protocol violation: the call fails at once and the connection is dropped")
  void itemsAndNames(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "many-entries");
      long t0 = System.nanoTime();
      // a write stats its target first
      assertThat(catchThrowable(() -> s.writeBytes("/tmp/x", new byte[1]))).isInstanceOf(SandboxException.class);
      await().atMost(Duration.ofSeconds(10)).until(() -> !fake.isOpen());
      assertThat(fake.closeReason()).contains("answer items");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
      // the fake let the real worker go on when the server hung up: it serves again
      await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> s.exec("echo back").stdout().equals("back\n"));

      DaemonConnection named = takeOver(server, s, "long-name");
      assertThat(catchThrowable(() -> s.writeBytes("/tmp/x", new byte[1]))).isInstanceOf(SandboxException.class);
      await().atMost(Duration.ofSeconds(10)).until(() -> !named.isOpen());
      assertThat(named.closeReason()).contains("over its limit of 4096");
    }
  }

  @Test
  @DisplayName("listings answered with 180 MB each, four at once: each fails as too large, the sandbox's answers never hold more than its budget, the heap grows by less than 64 MiB")
  void bigAnswers(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "big-answers");
      long base = heapAfterGc();
      CompletableFuture<Long> growth = CompletableFuture.supplyAsync(() -> heapGrowth(base, Duration.ofSeconds(10)));
      List<CompletableFuture<Throwable>> lists = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        lists.add(CompletableFuture.supplyAsync(() -> catchThrowable(() -> s.readDir("/"))));
      }
      for (CompletableFuture<Throwable> l : lists) {
        assertThat(l.get()).isInstanceOf(SandboxException.class).hasMessageContaining("larger than the server holds");
      }
      assertThat(growth.get()).as("heap growth while answered with 720 MB").isLessThan(SANDBOX_MEMORY);
      assertThat(fake.budget().peak()).isLessThanOrEqualTo(Budget.LIMIT);
    }
  }

  @Test
  @DisplayName("a daemon that never answers: a file call fails with deadline_exceeded within 30 s (+15 s of slack), and the server's health stays prompt meanwhile")
  void silent(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      takeOver(server, s, "silent");
      long t0 = System.nanoTime();
      Throwable stat = catchThrowable(() -> s.readBytes("/etc/hostname"));
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      assertThat(stat).isInstanceOf(SandboxException.class).hasMessageContaining("did not answer within 30 s");
      assertThat(took).isBetween(Duration.ofSeconds(25), Duration.ofSeconds(45));
      try (HttpClient http = HttpClient.newHttpClient()) {
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/health")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isBetween(200, 299);
      }
    }
  }

  @Test
  @DisplayName("a daemon that never reads: a call whose request it leaves unread fails once the connection is dropped for not reading (20 s), not never")
  void deaf(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "deaf");
      long t0 = System.nanoTime();
      // a 700 kB command: more than the socket holds unread, so the server's write to the daemon stalls
      Throwable exec = catchThrowable(() -> s.exec("true " + "a".repeat(700_000)));
      assertThat(exec).isInstanceOf(SandboxException.class);
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      assertThat(took).as("dropped after the 20 s write stall, before the 30 s answer deadline").isLessThan(Duration.ofSeconds(29));
      assertThat(fake.isOpen()).isFalse();
      assertThat(fake.closeReason()).contains("has not read");
    }
  }

  @Test
  @DisplayName("an answer on a stream the server never opened is a protocol violation: the connection is dropped")
  void spoofedStream(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "spoof");
      assertThat(catchThrowable(() -> s.readBytes("/etc/hostname"))).isInstanceOf(SandboxException.class);
      await().atMost(Duration.ofSeconds(10)).until(() -> !fake.isOpen());
      assertThat(fake.closeReason()).contains("never opened");
    }
  }

  @Test
  @DisplayName("a watcher nobody polls, flooded with valid 4000-byte events: the server keeps at most 1 MiB of them and its heap grows by less than 64 MiB")
  void watchFlood(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      DaemonConnection fake = takeOver(server, s, "watch-flood");
      long base = heapAfterGc();
      try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
        HttpResponse<String> created = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/filesystem.Filesystem/CreateWatcher"))
            .header("E2b-Sandbox-Id", s.id()).header("X-Access-Token", Tokens.envdToken(server, s.id()))
            .header("Content-Type", "application/json").header("Connect-Protocol-Version", "1")
            .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"/tmp\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        assertThat(Json.parse(created.body().getBytes(StandardCharsets.UTF_8)).path("watcherId").asText()).isNotEmpty();
      }
      long growth = heapGrowth(base, Duration.ofSeconds(10));
      assertThat(fake.isOpen()).as("valid events within credit are not a violation").isTrue();
      assertThat(growth).as("heap growth while flooded").isLessThan(SANDBOX_MEMORY);
      assertThat(fake.budget().peak()).isLessThanOrEqualTo(Budget.LIMIT);
    }
  }

  @Test
  @DisplayName("watch events named to make a backtracking pattern slow (250 of 4081 bytes, about 40 ms each to a backtracking pattern) cost the server little: the event after them arrives within 5 s")
  void craftedWatchNames(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      takeOver(server, s, "watch-crafted");
      List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
      long t0 = System.nanoTime();
      try (io.sandboxes.Subscription watch = s.onFileChange("/tmp", c -> seen.add(c.path()))) {
        await().atMost(Duration.ofSeconds(30)).until(() -> seen.stream().anyMatch(p -> p.endsWith("marker")));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("250 crafted names, then the marker").isLessThan(Duration.ofSeconds(5));
    }
  }

  @Test
  @DisplayName("while one sandbox's daemon floods the server, another sandbox's commands and the health endpoint keep answering (generous bounds here; the benchmark measures p99)")
  void othersServed(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox hostile = e2b.create(); LiveSandbox other = e2b.create()) {
      other.exec("true");
      takeOver(server, hostile, "flood");
      AtomicLong received = new AtomicLong();
      try (io.sandboxes.SpawnHandle flood = hostile.spawn("yes", io.sandboxes.SpawnOptions.pipes())) {
        flood.onStdout(t -> received.addAndGet(t.length()));
        await().atMost(Duration.ofSeconds(20)).until(() -> received.get() > 10_000);
        List<Long> exec = new ArrayList<>();
        List<Long> health = new ArrayList<>();
        try (HttpClient http = HttpClient.newHttpClient()) {
          HttpRequest h = HttpRequest.newBuilder(server.apiUrl().resolve("/health")).build();
          for (int i = 0; i < 20; i++) {
            long t0 = System.nanoTime();
            assertThat(other.exec("echo ok").stdout()).isEqualTo("ok\n");
            exec.add(System.nanoTime() - t0);
            t0 = System.nanoTime();
            assertThat(http.send(h, HttpResponse.BodyHandlers.discarding()).statusCode()).isBetween(200, 299);
            health.add(System.nanoTime() - t0);
          }
        }
        exec.sort(null);
        health.sort(null);
        assertThat(Duration.ofNanos(exec.get(exec.size() - 1))).as("slowest exec in the other sandbox").isLessThan(Duration.ofSeconds(2));
        assertThat(Duration.ofNanos(health.get(health.size() - 1))).as("slowest health answer").isLessThan(Duration.ofSeconds(1));
        assertThat(received.get()).as("the flood was flowing meanwhile").isGreaterThan(10_000);
      }
    }
  }

  @Test
  @DisplayName("a sandbox reconnecting 200 times in a row is accepted at most 20 times a second and leaves the server serving it afterwards")
  void reconnectLoop(LocalServer server, E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      byte[] script;
      try (InputStream in = HostileDaemonTest.class.getResourceAsStream("fake_daemon.py")) {
        script = in.readAllBytes();
      }
      s.writeBytes("/tmp/fake_daemon.py", script);
      s.exec("setsid python3 /tmp/fake_daemon.py reconnect > /tmp/fake.log 2>&1 < /dev/null &", ROOT);
      // the fake ends by letting the real worker go on; its connection comes back after the loop
      String took = await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
          .until(() -> s.exec("cat /tmp/fake.done").stdout().strip(), t -> !t.isEmpty());
      assertThat(Double.parseDouble(took)).as("seconds the sandbox took for 200 connections at 20 a second; unbounded, they take well under one").isGreaterThan(5.0); // the first 20, and what the kernel queues, get in at once
    }
  }
}
