package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.CommandFailedException;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.ProcessInfo;
import io.sandboxes.e2b.internal.Tasks;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24, point 1: processes by pid through {@code sandbox.commands()} against the real local
 * server. A second client (a provider of its own, as a restarted JVM would have) finds, attaches
 * to, writes to and kills what the first started.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CommandsByPidTest {
  private LiveSandbox sandbox;
  private E2BSandboxProvider other;
  private LiveSandbox seenByOther;
  private E2BApi e2b;
  private LocalServer server;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) {
    this.e2b = e2b;
    this.server = server;
    sandbox = e2b.create();
    other = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
    seenByOther = other.api().connect(sandbox.id());
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
    if (other != null) {
      other.close();
    }
  }

  private static ExecOptions background() {
    return ExecOptions.defaults().withTimeout(Duration.ofMinutes(2));
  }

  private static Optional<ProcessInfo> listed(LiveSandbox s, int pid) {
    return s.commands().list().stream().filter(p -> p.pid() == pid).findFirst();
  }

  @Test
  @DisplayName("a background command is listed as started, found by a second client, attached to, written to, its input closed, and its exit and output collected")
  void secondClientAttachesWritesAndWaits() {
    String script = "while read line; do echo \"got:$line\"; done; echo eof; echo bye >&2; exit 3";
    CommandHandle first = sandbox.commands().start(script, background().withStdin(true).withCwd("/tmp")
        .withEnv(Map.of("MARK", "by-the-first-client")));
    int pid = first.pid();
    assertThat(pid).isPositive();

    ProcessInfo info = listed(seenByOther, pid).orElseThrow(() -> new AssertionError("pid " + pid + " not listed by the second client"));
    assertThat(info.cmd()).isEqualTo("/bin/bash");
    assertThat(info.args()).containsExactly("-l", "-c", script);
    assertThat(info.envs()).containsEntry("MARK", "by-the-first-client");
    assertThat(info.cwd()).isEqualTo("/tmp");
    assertThat(info.tag()).isNull();

    first.disconnect();
    List<String> heard = new CopyOnWriteArrayList<>();
    try (CommandHandle second = seenByOther.commands().connect(pid, heard::add, null)) {
      seenByOther.commands().sendStdin(pid, "one\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> second.stdout().contains("got:one"));
      second.sendStdin("two\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> second.stdout().contains("got:two"));
      seenByOther.commands().closeStdin(pid);
      ExecResult result = second.waitFor();
      assertThat(result.exitCode()).isEqualTo(3);
      assertThat(result.stdout()).isEqualTo("got:one\ngot:two\neof\n");
      assertThat(result.stderr()).isEqualTo("bye\n");
      assertThat(String.join("", heard)).isEqualTo(result.stdout());
      assertThatThrownBy(result::orThrow).isInstanceOf(CommandFailedException.class);
      assertThat(second.waitFor()).isEqualTo(result);
    }
    assertThatThrownBy(first::waitFor).isInstanceOf(IllegalStateException.class).hasMessageContaining("disconnected");
    assertThat(sandbox.commands().kill(pid)).as("a kill of a process that has exited").isFalse();
  }

  @Test
  @DisplayName("disconnect leaves the command running; connecting again hears its later output; kill by pid ends it (true), then says false")
  void disconnectReconnectKill() {
    CommandHandle ticker = sandbox.commands().start("for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", background());
    int pid = ticker.pid();
    await().atMost(Duration.ofSeconds(10)).until(() -> ticker.stdout().contains("tick-2\n"));
    ticker.disconnect();
    String before = ticker.stdout();
    ticker.disconnect(); // idempotent
    // the ticker runs on for a minute: its handle's reader must not
    await().atMost(Duration.ofSeconds(5)).until(() -> Tasks.live(sandbox.id()) == 0);

    try (CommandHandle again = other.api().connect(sandbox.id()).commands().connect(pid)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> again.stdout().lines().count() >= 3);
      int firstTick = Integer.parseInt(again.stdout().lines().findFirst().orElseThrow().replaceAll("\\D", ""));
      int lastBefore = Integer.parseInt(before.strip().lines().reduce((a, b) -> b).orElseThrow().replaceAll("\\D", ""));
      assertThat(firstTick).as("the first tick heard after reconnecting").isGreaterThan(lastBefore);
      assertThat(ticker.stdout()).as("the disconnected handle heard nothing more").isEqualTo(before);

      assertThat(again.waitFor(Duration.ofMillis(300))).as("a bounded wait on a running command").isEmpty();
      assertThat(seenByOther.commands().kill(pid)).isTrue();
      ExecResult killed = again.waitFor();
      assertThat(killed.exitCode()).isEqualTo(-1);
      assertThat(killed.error()).isEqualTo("signal: killed");
      assertThat(killed.isSuccess()).isFalse();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> listed(sandbox, pid).isEmpty());
    assertThat(sandbox.commands().kill(pid)).isFalse();
  }

  @Test
  @DisplayName("waitFor of a background command is exec's result: non-zero exit as data, a deadline as CommandTimeoutException with the output before it")
  void waitForIsExecs() {
    CommandHandle failing = sandbox.commands().start("echo out; echo err >&2; exit 7");
    ExecResult r = failing.waitFor();
    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stdout()).isEqualTo("out\n");
    assertThat(r.stderr()).isEqualTo("err\n");
    assertThat(r.error()).isEqualTo("exit status 7");
    assertThat(sandbox.exec("echo out; echo err >&2; exit 7")).extracting(ExecResult::exitCode, ExecResult::stdout, ExecResult::stderr,
        ExecResult::error).containsExactly(r.exitCode(), r.stdout(), r.stderr(), r.error());

    CommandHandle slow = sandbox.commands().start("echo before; sleep 60", ExecOptions.defaults().withTimeout(Duration.ofSeconds(1)));
    long t0 = System.nanoTime();
    assertThatThrownBy(slow::waitFor).isInstanceOfSatisfying(CommandTimeoutException.class, e -> {
      assertThat(e.stdout()).isEqualTo("before\n");
      assertThat(e.command()).isEqualTo("echo before; sleep 60");
      assertThat(e.timeout()).isEqualTo(Duration.ofSeconds(1));
    });
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the deadline's report").isLessThan(Duration.ofSeconds(8));
  }

  /** Whether a connect by pid still finds the process (then waits for its end); false when the server says not_found. */
  private static boolean connectable(LiveSandbox s, int pid) {
    try (CommandHandle h = s.commands().connect(pid)) {
      h.waitFor();
      return true;
    } catch (SandboxRpcException e) {
      if ("not_found".equals(e.code())) {
        return false;
      }
      throw e;
    }
  }

  @Test
  @DisplayName("a finished command's end is kept for a late connect by pid, and let go once the retention has passed, while later ones are kept")
  void finishedEndsKeptThenLetGo() {
    LiveSandbox s = e2b.create();
    try {
      server.registry().find(s.id()).orElseThrow().processEndRetentionForTesting(Duration.ofSeconds(3));
      CommandHandle first = s.commands().start("exit 3");
      assertThat(first.waitFor().exitCode()).isEqualTo(3);
      try (CommandHandle late = s.commands().connect(first.pid())) {
        assertThat(late.waitFor().exitCode()).as("a late connect within the retention").isEqualTo(3);
      }
      for (int i = 0; i < 20; i++) {
        s.exec("true"); // more ends behind it
      }
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).until(() -> !connectable(s, first.pid()));
      CommandHandle last = s.commands().start("exit 4");
      assertThat(last.waitFor().exitCode()).isEqualTo(4);
      try (CommandHandle late = s.commands().connect(last.pid())) {
        assertThat(late.waitFor().exitCode()).as("an end newer than the retention is still kept").isEqualTo(4);
      }
    } finally {
      s.kill();
    }
  }

  @Test
  @DisplayName("by pid: an unknown pid is not_found (kill: false), a pid that is not positive is refused before any call")
  void unknownAndInvalidPids() {
    int missing = 999_999;
    assertThat(sandbox.commands().kill(missing)).isFalse();
    assertThatThrownBy(() -> sandbox.commands().connect(missing)).isInstanceOfSatisfying(SandboxRpcException.class,
        e -> assertThat(e.code()).isEqualTo("not_found"));
    assertThatThrownBy(() -> sandbox.commands().sendStdin(missing, "x")).isInstanceOfSatisfying(SandboxRpcException.class,
        e -> assertThat(e.code()).isEqualTo("not_found"));
    assertThatThrownBy(() -> sandbox.commands().closeStdin(missing)).isInstanceOfSatisfying(SandboxRpcException.class,
        e -> assertThat(e.code()).isEqualTo("not_found"));
    for (int bad : new int[] {0, -1}) {
      assertThatThrownBy(() -> sandbox.commands().kill(bad)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> sandbox.commands().connect(bad)).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
