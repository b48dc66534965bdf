package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecResult;
import io.sandboxes.ProcessExit;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.SandboxState;
import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The in-sandbox daemon's worker dies under running calls: what the client is told, through the server. */
@ExtendWith(SharedServer.class)
class DaemonRestartTest {

  @Test
  @DisplayName("the daemon's worker killed from inside (the user has sudo): calls in flight fail saying the outcome is unknown, none reports an exit, and the sandbox serves again within seconds")
  void workerKilledFromInside(E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      SpawnHandle sleeper = s.spawn("sleep 300", SpawnOptions.pipes());
      CompletableFuture<ProcessExit> sleeperExit = new CompletableFuture<>();
      sleeper.onClose(sleeperExit::complete);
      String worker = s.exec("pgrep -x envd-worker").stdout().strip();
      assertThat(worker).matches("[0-9]+");

      // the kill runs under the worker it kills, so its own call is in flight when the worker dies
      Throwable killer = catchThrowable(() -> s.exec("sudo kill -9 " + worker + "; sleep 5; echo survived"));
      // the worker can die before or after it reported the start: either way an honest error
      assertThat(killer).as("a call whose daemon died reports no exit").isInstanceOf(SandboxException.class);
      assertThat(killer.getMessage()).containsAnyOf("outcome cannot be observed", "could not be reached");

      ProcessExit exit = sleeperExit.get(15, TimeUnit.SECONDS);
      assertThat(exit.exitCode()).as("not a made-up success").isEqualTo(-1);
      assertThat(exit.error()).contains("outcome cannot be observed");

      // the supervisor starts another worker, and the server's connection to it serves at once
      await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
          .until(() -> "again".equals(s.exec("echo again").stdout().strip()));
      ExecResult next = s.exec("pgrep -x envd-worker");
      assertThat(next.stdout().strip()).matches("[0-9]+").isNotEqualTo(worker);
    }
  }

  @Test
  @DisplayName("sudo kill -9 -1 inside the sandbox kills every process but its init, the daemon's supervisor (which ignores a TERM "
      + "from inside too): the sandbox lives on, and within 15 s exec, a file read and a PTY work again")
  void killEverything(E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      assertThat(s.exec("cat /proc/1/comm").stdout().strip()).as("the supervisor is the container's init").isEqualTo("envd-supervise");
      // root in the sandbox: through sudo, as on E2B; where sudo is refused (no-new-privileges, as
      // on gVisor) the same commands run as root through the API
      String sudo = TestRuntime.gvisor() ? "" : "sudo ";
      io.sandboxes.ExecOptions as = TestRuntime.gvisor() ? io.sandboxes.ExecOptions.defaults().withUser("root")
          : io.sandboxes.ExecOptions.defaults();
      // a stop request from inside is not docker stop: the init ignores it
      assertThat(s.exec(sudo + "kill -TERM 1; " + sudo + "kill -INT 1; sleep 1; echo sent", as).stdout().strip()).isEqualTo("sent");
      assertThat(s.exec("cat /proc/1/comm").stdout().strip()).isEqualTo("envd-supervise");
      s.writeBytes("/home/user/kept.txt", "still here".getBytes(StandardCharsets.UTF_8));
      String worker = s.exec("pgrep -x envd-worker").stdout().strip();

      // the kill runs under the worker it kills: its own call fails, honestly
      java.util.concurrent.atomic.AtomicReference<ExecResult> result = new java.util.concurrent.atomic.AtomicReference<>();
      Throwable killer = catchThrowable(() -> result.set(s.exec(sudo + "kill -9 -1; sleep 5; echo survived", as)));
      if (killer == null) {
        // the client saw the process table's honest "unknown" (137 with a note), never a made-up exit
        assertThat(result.get().exitCode()).isNotZero();
        assertThat(result.get().stdout()).doesNotContain("survived");
        assertThat(result.get().stderr()).contains("exit code unknown");
      } else {
        assertThat(killer).isInstanceOf(SandboxException.class);
      }
      long killedAt = System.nanoTime();

      await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
          .until(() -> "again".equals(s.exec("echo again").stdout().strip()));
      assertThat(s.readBytes("/home/user/kept.txt")).asString(StandardCharsets.UTF_8).isEqualTo("still here");
      StringBuilder screen = new StringBuilder();
      try (SpawnHandle pty = s.spawn("bash", io.sandboxes.SpawnOptions.terminal(80, 24))) {
        pty.onStdout(screen::append);
        pty.write("echo pty-$((6*7))\n");
        await().atMost(Duration.ofSeconds(10)).until(() -> screen.toString().contains("pty-42"));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as("back within the bound").isLessThan(Duration.ofSeconds(15));

      assertThat(s.exec("pgrep -x envd-worker").stdout().strip()).matches("[0-9]+").isNotEqualTo(worker);
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(e2b.listAll(SandboxQuery.all())).anySatisfy(i -> {
        assertThat(i.id()).isEqualTo(s.id());
        assertThat(i.state()).isEqualTo(SandboxState.RUNNING);
      });
    }
  }
}
