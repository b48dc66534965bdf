package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecResult;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.ProcessInfo;
import io.sandboxes.e2b.PtyOptions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24, point 1 for terminals: {@code sandbox.pty()} against the real local server, each call
 * by pid and observed from inside the terminal (what {@code stty size}, {@code pwd} and
 * {@code id} print there) or the sandbox (whether the shell still runs).
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PtyByPidTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private LiveSandbox sandbox;

  @BeforeAll
  void start(E2BApi e2b) {
    sandbox = e2b.create();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private boolean running(int pid) {
    return sandbox.commands().list().stream().anyMatch(p -> p.pid() == pid);
  }

  @Test
  @DisplayName("create starts a shell on a terminal of the size, folder, environment and user asked for; input and resize by pid reach it")
  void createInputResize() {
    CopyOnWriteArrayList<String> data = new CopyOnWriteArrayList<>();
    CommandHandle shell = sandbox.pty().create(PtyOptions.of(80, 24).withCwd("/tmp").withEnv(Map.of("PTY_MARK", "marked"))
        .withUser("root").withTimeout(Duration.ofMinutes(2)).withOnData(data::add));
    int pid = shell.pid();
    try {
      assertThat(running(pid)).isTrue();
      // the typed line is echoed as typed; only the shell's answer has the value after the '='
      sandbox.pty().sendInput(pid, "echo \"S=$(stty size) D=$(pwd) E=$PTY_MARK U=$(id -un) T=$TERM\"\n");
      await().atMost(WAIT).until(() -> shell.stdout().contains("S=24 80 D=/tmp E=marked U=root T=xterm-256color"));
      assertThat(String.join("", data)).contains("S=24 80 D=/tmp E=marked U=root");

      sandbox.pty().resize(pid, 132, 43);
      sandbox.pty().sendInput(pid, "echo \"R=$(stty size)\"\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      await().atMost(WAIT).until(() -> shell.stdout().contains("R=43 132"));
    } finally {
      sandbox.pty().kill(pid);
    }
  }

  @Test
  @DisplayName("connect by pid from another handle receives the terminal's output from then on; disconnecting leaves it running")
  void connectByPid() {
    CommandHandle first = sandbox.pty().create(PtyOptions.of(80, 24).withTimeout(Duration.ofMinutes(2)));
    int pid = first.pid();
    try {
      first.disconnect();
      assertThat(running(pid)).isTrue();
      CopyOnWriteArrayList<String> data = new CopyOnWriteArrayList<>();
      try (CommandHandle again = sandbox.pty().connect(pid, data::add)) {
        assertThat(again.pid()).isEqualTo(pid);
        sandbox.pty().sendInput(pid, "echo \"C=$((6 * 7))\"\n");
        await().atMost(WAIT).until(() -> again.stdout().contains("C=42"));
        assertThat(String.join("", data)).contains("C=42");
      }
      assertThat(running(pid)).isTrue();
    } finally {
      sandbox.pty().kill(pid);
    }
  }

  @Test
  @DisplayName("kill by pid ends the shell: it leaves the process list, the handle reports it killed, a second kill says false")
  void killByPid() {
    CommandHandle shell = sandbox.pty().create(PtyOptions.of(80, 24).withTimeout(Duration.ofMinutes(2)));
    int pid = shell.pid();
    sandbox.pty().sendInput(pid, "echo \"K=$$\"\n");
    await().atMost(WAIT).until(() -> shell.stdout().contains("K=" + pid));
    assertThat(sandbox.pty().kill(pid)).isTrue();
    ExecResult end = shell.waitFor(WAIT).orElseThrow();
    assertThat(end.exitCode()).isNotZero();
    await().atMost(WAIT).until(() -> !running(pid));
    assertThat(sandbox.exec("kill -0 " + pid + " 2>/dev/null && echo alive || echo gone").stdout().strip()).isEqualTo("gone");
    assertThat(sandbox.pty().kill(pid)).isFalse();
    assertThatThrownBy(() -> sandbox.pty().sendInput(pid, "x")).isInstanceOf(SandboxRpcException.class)
        .satisfies(e -> assertThat(((SandboxRpcException) e).code()).isEqualTo("not_found"));
    assertThatThrownBy(() -> sandbox.pty().resize(pid, 80, 24)).isInstanceOf(SandboxRpcException.class);
  }

  @Test
  @DisplayName("bad input is refused before anything is sent; an unknown folder is the daemon's refusal, never a shell elsewhere")
  void refusals() {
    assertThatThrownBy(() -> sandbox.pty().resize(0, 80, 24)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> sandbox.pty().resize(1, 0, 24)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> sandbox.pty().create(PtyOptions.of(80, 24).withCwd("/no/such/dir")))
        .isInstanceOf(io.sandboxes.SandboxException.class);
    assertThat(sandbox.commands().list()).noneMatch((ProcessInfo p) -> "/no/such/dir".equals(p.cwd()));
  }
}
