package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.DirEntry;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.LiveSandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Behaviour contract, sections D (exec), E (nothing left running) and G (files), against real
 * processes in a real sandbox. Timing cases use generous bounds: they prove order and the
 * absence of early or stuck answers, not speed.
 */
class ExecCasesTest extends OneSandboxCases {
  @Override
  String project() {
    return "exec-cases";
  }



  /**
   * Cases 60-62, seen from outside the SDK (the JVM's thread dump, not the SDK's own counter): the
   * moment a call returns, no timer (watchdog), reader or stream thread of this sandbox is left on
   * the client side; and the server's threads for the processes the call started (their pumps and
   * deadline timers) end soon after, leaving only those that were there before. "Soon" is 15 s: one
   * thread dump can take seconds on a loaded machine, and the leaks this is for last until a
   * command's deadline (60 s by default; plainExec adds one of 10 minutes).
   */
  private void nothingLeftRunning(List<String> serverThreadsBefore) {
    assertThat(LiveThreads.client(sandbox.id())).as("client threads of this sandbox").isEmpty();
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
        assertThat(serverThreadsBefore).as("threads of this sandbox").containsAll(LiveThreads.of(sandbox.id())));
  }

  /** The Start requests made since the marker, with their process command lines. */
  private List<FaultServer.Recorded> startsSince(long marker) {
    return h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> r.atNanos() >= marker).toList();
  }



  @Test
  @DisplayName("case 44, case 48, case 60: one background start with stdin closed, cwd, env and the deadline; the result has only the three fields; no probe and nothing left running")
  void plainExec() throws Exception {
    List<String> before = LiveThreads.of(sandbox.id());
    sandbox.exec("mkdir -p /home/user/workspace").orThrow();
    long mark = System.nanoTime();
    ExecResult r = sandbox.exec("echo hi; echo $K", ExecOptions.defaults().withCwd("/home/user/workspace")
        .withTimeout(Duration.ofSeconds(5)).withEnv(Map.of("K", "v")));
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo("hi\nv\n");
    assertThat(r.stderr()).isEmpty();
    List<FaultServer.Recorded> starts = startsSince(mark);
    assertThat(starts).hasSize(1);
    JsonNode body = Wire.startBody(starts.get(0));
    assertThat(body.path("stdin").asBoolean(true)).isFalse();
    assertThat(body.path("process").path("cwd").asText()).isEqualTo("/home/user/workspace");
    assertThat(body.path("process").path("envs").path("K").asText()).isEqualTo("v");
    assertThat(starts.get(0).headers().get("connect-timeout-ms")).isEqualTo("5000");
    // case 60: the moment exec returns, no timer (watchdog) or reader of this sandbox is alive in the JVM
    nothingLeftRunning(before);
    // nor does a finished command with a far deadline leave a timer armed on either side until then
    sandbox.exec("true", ExecOptions.defaults().withTimeout(Duration.ofMinutes(10))).orThrow();
    nothingLeftRunning(before);
  }

  /** One quick launch: how long it took and how many Start requests it made (more than one means it was probed). */
  private record Launch(ExecResult result, Duration took, int starts) {}

  /**
   * Runs {@code command} three times and returns the fastest run: a load spike on a shared machine
   * can slow one run, but a delay built into every quick exec slows all three.
   */
  private Launch fastestOf3(String command, String child) {
    Launch best = null;
    for (int i = 0; i < 3; i++) {
      long mark = System.nanoTime();
      ExecResult r = sandbox.exec(command);
      int starts = startsSince(mark).size();
      assertThat(r.exitCode()).as("exit of %s", command).isZero();
      // bounded per run, so a launch that waits on its child fails here rather than after three of them
      assertThat(r.duration()).as("run %d of %s", i, command).isLessThan(Duration.ofSeconds(5));
      // the '&' really ran: its child is alive, detached, after exec returned (on a loaded machine
      // nohup and sh may not have exec'd it yet when exec returns, so it is waited for)
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(sandbox.exec("pgrep -fx '" + child + "' >/dev/null && echo alive || echo none").stdout()).isEqualTo("alive\n"));
      sandbox.exec("pkill -fx '" + child + "'; true");
      Launch l = new Launch(r, r.duration(), starts);
      if (best == null || l.took().compareTo(best.took()) < 0) {
        best = l;
      }
    }
    return best;
  }

  @Test
  @DisplayName("case 45, case 58: no sniffing of '&': a launch whose '&' is inside a taken if-branch, and a detached sidecar, return their real exit promptly")
  void noSniffing() {
    // "promptly": under 1 s, short of the 1.5 s settle probe, for the fastest of three runs; the
    // if-guard fails (nothing listens on port 9 in the sandbox), so the branch with the '&' runs
    Launch guarded = fastestOf3("if ! curl -s -m 2 -o /dev/null http://127.0.0.1:9/; then nohup sh -c 'exec sleep 29.5' > /tmp/app.log 2>&1 & fi",
        "sleep 29.5");
    assertThat(guarded.took()).as("fastest guarded launch").isLessThan(Duration.ofMillis(1_000));
    assertThat(guarded.starts()).as("Start requests of the fastest guarded launch (a probe would be a second)").isEqualTo(1);
    Launch sidecar = fastestOf3("nohup sh -c 'exec sleep 28.5' > /tmp/redis.log 2>&1 & true", "sleep 28.5");
    assertThat(sidecar.took()).as("fastest sidecar launch").isLessThan(Duration.ofMillis(1_000));
    assertThat(sidecar.starts()).as("Start requests of the fastest sidecar launch").isEqualTo(1);
  }

  @Test
  @DisplayName("case 46: a non-zero exit is returned as data, with its partial output")
  void nonZero() {
    ExecResult r = sandbox.exec("echo partial; echo boom >&2; exit 2");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stdout()).isEqualTo("partial\n");
    assertThat(r.stderr()).isEqualTo("boom\n");
  }

  @Test
  @DisplayName("case 47, case 62: an infrastructure failure (the deadline passing) is thrown as it is, and nothing is left running")
  void infrastructureFailure() {
    List<String> before = LiveThreads.of(sandbox.id());
    assertThatThrownBy(() -> sandbox.exec("sleep 30", ExecOptions.defaults().withTimeout(Duration.ofSeconds(2))))
        .isInstanceOfSatisfying(io.sandboxes.CommandTimeoutException.class, e -> assertThat(e.code()).isEqualTo("deadline_exceeded"));
    // case 62: as the error propagates, the window timer and the reader are already gone
    nothingLeftRunning(before);
  }

  @Test
  @DisplayName("case 49, case 50, case 52: a long command is probed once, about 1.5 s in, with kill -0 and a 10 s deadline; alive means keep waiting")
  void settleProbe() throws Exception {
    long mark = System.nanoTime();
    ExecResult r = sandbox.exec("sleep 3.5; echo done");
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo("done\n");
    List<FaultServer.Recorded> starts = startsSince(mark);
    assertThat(starts).hasSize(2);
    String probe = Wire.command(starts.get(1));
    assertThat(probe).matches("kill -0 \\d+ 2>/dev/null && echo MOL_ALIVE \\|\\| echo MOL_GONE");
    assertThat(starts.get(1).headers().get("connect-timeout-ms")).isEqualTo("10000");
    long delay = starts.get(1).atNanos() - starts.get(0).atNanos();
    assertThat(Duration.ofNanos(delay)).isGreaterThanOrEqualTo(Duration.ofMillis(1_400)).isLessThan(Duration.ofMillis(3_000));
  }

  @Test
  @DisplayName("case 50: a long command run as another user (root) is probed as that user: another user's kill -0 is refused for a live process, which must not read as gone")
  void probeAsTheCommandsUser() throws Exception {
    long mark = System.nanoTime();
    // silent for 5 s: a probe as the default user reads root's live process as gone, and the call
    // would end at about 3.5 s with 137
    ExecResult r = sandbox.exec("sleep 5; echo done", io.sandboxes.ExecOptions.defaults().withUser("root"));
    assertThat(r.exitCode()).as(r.stderr()).isZero();
    assertThat(r.stdout()).isEqualTo("done\n");
    List<FaultServer.Recorded> starts = startsSince(mark);
    assertThat(starts).hasSize(2);
    assertThat(Wire.command(starts.get(1))).startsWith("kill -0");
    assertThat(starts.get(1).headers().get("authorization"))
        .isEqualTo("Basic " + java.util.Base64.getEncoder().encodeToString("root:".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }

  @Test
  @DisplayName("case 51: a probe that fails counts as alive: the command's real outcome is still awaited, past the settle and grace windows")
  void failedProbeMeansAlive() {
    h.envd.on(r -> r.path().equals("/process.Process/Start") && Wire.command(r).startsWith("kill -0"),
        FaultServer.json(503, "{\"code\":\"unavailable\",\"message\":\"probe refused\"}"));
    try {
      long mark = System.nanoTime();
      // silent for 5 s: past the 1.5 s settle plus the 2 s grace, so a failed probe read as "gone"
      // would end the call at about 3.5 s with 137; read as "alive", the real exit 4 comes at 5 s
      ExecResult r = sandbox.exec("sleep 5; echo real; exit 4");
      assertThat(r.exitCode()).isEqualTo(4);
      assertThat(r.stdout()).isEqualTo("real\n");
      assertThat(r.stderr()).isEmpty();
      assertThat(r.duration()).isGreaterThanOrEqualTo(Duration.ofMillis(4_900));
      assertThat(startsSince(mark).stream().map(Wire::command).filter(c -> c.startsWith("kill -0"))).as("probes refused").hasSize(1);
    } finally {
      h.envd.clearFaults();
    }
  }

  private static final String START = "{\"event\":{\"start\":{\"pid\":999999}}}";

  private static String out(String text) {
    return "{\"event\":{\"data\":{\"stdout\":\"" + java.util.Base64.getEncoder().encodeToString(text.getBytes()) + "\"}}}";
  }

  private static String err(String text) {
    return "{\"event\":{\"data\":{\"stderr\":\"" + java.util.Base64.getEncoder().encodeToString(text.getBytes()) + "\"}}}";
  }

  /** Scripts the process stream of one command; the liveness probe still runs in the real sandbox (pid 999999 is gone there). */
  private ExecResult scripted(String command, FaultServer.Step... steps) {
    h.envd.on(r -> r.path().equals("/process.Process/Start") && Wire.command(r).equals(command), FaultServer.stream(steps));
    try {
      return sandbox.exec(command);
    } finally {
      h.envd.clearFaults();
    }
  }

  @Test
  @DisplayName("case 53, case 61: the pid gone but the exit report arriving inside the 2 s window: the real outcome is used, with nothing left armed")
  void lateReport() {
    List<String> before = LiveThreads.of(sandbox.id());
    ExecResult r = scripted("npm run build", FaultServer.Step.send(0, START), FaultServer.Step.send(1_700, out("built\n")),
        FaultServer.Step.send(0, "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}"),
        FaultServer.Step.end(0, "{}"));
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo("built\n");
    assertThat(r.stderr()).isEmpty();
    assertThat(r.duration()).isLessThan(Duration.ofMillis(3_400));
    // case 61: the grace timer is not left armed once the late report won
    nothingLeftRunning(before);
  }

  @Test
  @DisplayName("case 54: a late non-zero report is mapped like a live one")
  void lateNonZero() {
    ExecResult r = scripted("npm run build &", FaultServer.Step.send(0, START), FaultServer.Step.send(1_700, out("partial\n")),
        FaultServer.Step.send(0, err("oom\n")),
        FaultServer.Step.send(0, "{\"event\":{\"end\":{\"exitCode\":2,\"exited\":true,\"status\":\"exit status 2\"}}}"),
        FaultServer.Step.end(0, "{}"));
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stdout()).isEqualTo("partial\n");
    assertThat(r.stderr()).isEqualTo("oom\n");
  }

  @Test
  @DisplayName("case 55, case 56: gone with its output held and no report in 2 s: exit 137 after the window, output so far, and the explanatory stderr line; never 0")
  void unknownOutcome() {
    List<String> before = LiveThreads.of(sandbox.id());
    ExecResult r = scripted("vite --host &", FaultServer.Step.send(0, START), FaultServer.Step.send(0, out("launched\n")),
        FaultServer.Step.send(0, err("warn\n")), FaultServer.Step.hold(20_000));
    assertThat(r.exitCode()).isEqualTo(137);
    assertThat(r.stdout()).isEqualTo("launched\n");
    // the note goes after a newline, as the seed appends it (stderr "warn\n" + "\n" + note)
    assertThat(r.stderr()).isEqualTo("warn\n\ne2b: exit code unknown — the started process (pid 999999) is gone but its output stream"
        + " is still held, so its real outcome cannot be observed; reporting failure");
    assertThat(r.duration()).isGreaterThanOrEqualTo(Duration.ofMillis(3_400)).isLessThan(Duration.ofSeconds(8));
    nothingLeftRunning(before);
    ExecResult quiet = scripted("vite &", FaultServer.Step.send(0, START), FaultServer.Step.hold(20_000));
    assertThat(quiet.exitCode()).isEqualTo(137);
    assertThat(quiet.stderr()).isEqualTo("e2b: exit code unknown — the started process (pid 999999) is gone but its output stream"
        + " is still held, so its real outcome cannot be observed; reporting failure");
  }

  @Test
  @DisplayName("case 57: the exit report is the only record of an exit code on this protocol: when it arrives after the pid is gone, its code is the result")
  void recordedExitCode() {
    ExecResult r = scripted("make", FaultServer.Step.send(0, START), FaultServer.Step.send(1_800,
        "{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\"}}}"), FaultServer.Step.end(0, "{}"));
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.stderr()).isEmpty();
  }

  @Test
  @DisplayName("a stream that ends without an exit report throws: nothing is inferred from a silent end")
  void noReport() {
    assertThatThrownBy(() -> scripted("true", FaultServer.Step.send(0, START), FaultServer.Step.end(0, "{}")))
        .isInstanceOf(SandboxException.class).hasMessageContaining("without an exit report");
  }

  @Test
  @DisplayName("case 151: an interrupted exec ends promptly with an exception, keeps the interrupt flag, and leaves nothing running")
  void interrupt() throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> flag = new AtomicReference<>();
    Thread t = Thread.ofVirtual().start(() -> {
      try {
        sandbox.exec("sleep 30");
      } catch (Throwable e) {
        thrown.set(e);
        flag.set(Thread.currentThread().isInterrupted());
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.exec("pgrep -fx 'sleep 30' >/dev/null && echo y || echo n").stdout().equals("y\n"));
    t.interrupt();
    t.join(Duration.ofSeconds(5));
    assertThat(t.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(SandboxException.class).hasMessageContaining("interrupted");
    assertThat(flag.get()).isTrue();
    // case 62: the window timers (the deadline's and the settle probe's) are cancelled before the
    // error propagates, also for an interrupted caller
    assertThat(io.sandboxes.e2b.internal.Watchdog.armed(sandbox.id())).as("timers of this sandbox still armed").isZero();
    // the interrupted command itself may still run in the sandbox (with its server threads); the
    // client keeps nothing for it: no probe, no stream, no timer (the bound is for the thread dump,
    // which can take seconds on a loaded machine)
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(LiveThreads.client(sandbox.id())).as("client threads of this sandbox").isEmpty());
  }

  @Test
  @DisplayName("case 151: an interrupted file transfer ends promptly with an exception and keeps the interrupt flag")
  void interruptTransfer() throws Exception {
    sandbox.exec("head -c 150000000 /dev/zero > /tmp/big.bin").orThrow();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> flag = new AtomicReference<>();
    Thread t = Thread.ofPlatform().start(() -> {
      try {
        sandbox.readBytes("/tmp/big.bin");
      } catch (Throwable e) {
        thrown.set(e);
        flag.set(Thread.currentThread().isInterrupted());
      }
    });
    // under way: in the HTTP client (a socket read there shows as RUNNABLE), or parked waiting for the answer
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> t.getState() == Thread.State.WAITING
        || t.getState() == Thread.State.TIMED_WAITING || !t.isAlive()
        || java.util.Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().startsWith("io.sandboxes.e2b.internal.Http")));
    t.interrupt();
    t.join(Duration.ofSeconds(5));
    assertThat(t.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(SandboxException.class).hasMessageContaining("interrupted");
    assertThat(flag.get()).isTrue();
    sandbox.deleteFile("/tmp/big.bin");
  }

  @Test
  @DisplayName("case 77, case 78, case 79, case 80: text and exact bytes go through the file API, not commands; delete removes")
  void filesThroughFileApi() {
    byte[] bytes = new byte[300_000];
    new java.util.Random(7).nextBytes(bytes);
    long mark = System.nanoTime();
    sandbox.writeBytes("/tmp/part", bytes);
    assertThat(sandbox.readBytes("/tmp/part")).isEqualTo(bytes);
    sandbox.writeFile("/home/user/workspace/hello.js", "console.log('hi')");
    assertThat(sandbox.readFile("/home/user/workspace/hello.js")).isEqualTo("console.log('hi')");
    assertThat(startsSince(mark)).isEmpty();
    assertThat(h.envd.requests("POST", "/files").stream().filter(r -> r.atNanos() >= mark)).hasSize(2);
    sandbox.deleteFile("/tmp/part");
    assertThatThrownBy(() -> sandbox.readBytes("/tmp/part")).isInstanceOf(SandboxFileNotFoundException.class);
    sandbox.deleteFile("/tmp/part");
  }

  @Test
  @DisplayName("case 59, case 81, case 82, case 83, case 84, case 85: readDir lists through envd, keeps dotfiles and spaces, reports links as links with targets, sizes as numbers, throws on a missing path")
  void readDir() {
    sandbox.exec("rm -rf /home/user/rd && mkdir -p /home/user/rd/src /home/user/rd/empty && printf 'twelve bytes' > '/home/user/rd/a  b.txt'"
        + " && touch /home/user/rd/.env && ln -s .agents /home/user/rd/.claude && mkdir /home/user/rd/.agents").orThrow();
    long mark = System.nanoTime();
    List<DirEntry> entries = sandbox.readDir("/home/user/rd");
    assertThat(startsSince(mark)).isEmpty();
    assertThat(entries).extracting(DirEntry::name).containsExactlyInAnyOrder("src", "empty", "a  b.txt", ".env", ".claude", ".agents");
    assertThat(entries).filteredOn(e -> e.name().equals("a  b.txt")).singleElement()
        .satisfies(e -> {
          assertThat(e.type()).isEqualTo(DirEntry.Type.FILE);
          assertThat(e.size()).isEqualTo(12L);
        });
    assertThat(entries).filteredOn(e -> e.name().equals("src")).singleElement()
        .satisfies(e -> assertThat(e.type()).isEqualTo(DirEntry.Type.DIRECTORY));
    assertThat(entries).filteredOn(e -> e.name().equals(".claude")).singleElement()
        .satisfies(e -> {
          assertThat(e.type()).isEqualTo(DirEntry.Type.SYMLINK);
          assertThat(e.symlinkTarget()).isEqualTo("/home/user/rd/.agents");
        });
    assertThat(sandbox.readDir("/home/user/rd/empty")).isEmpty();
    assertThatThrownBy(() -> sandbox.readDir("/home/user/rd/missing"))
        .isInstanceOf(SandboxFileNotFoundException.class).hasMessageContaining("/home/user/rd/missing");
  }

  @Test
  @DisplayName("case 87: keepAlive sets the deadline to that long from now, and nothing else moves it")
  void keepAlive() {
    LiveSandbox e2b = (LiveSandbox) sandbox;
    java.time.Instant before = e2b.info().endAt();
    sandbox.exec("true");
    sandbox.readDir("/home/user");
    h.provider.describe(sandbox.id());
    assertThat(e2b.info().endAt()).isEqualTo(before);
    sandbox.keepAlive(Duration.ofHours(2));
    assertThat(e2b.info().endAt()).isAfter(java.time.Instant.now().plus(Duration.ofMinutes(119)));
    sandbox.keepAlive(Duration.ofMinutes(30));
    assertThat(e2b.info().endAt()).isBefore(java.time.Instant.now().plus(Duration.ofMinutes(31)));
  }
}
