package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecResult;
import io.sandboxes.ProcessExit;
import io.sandboxes.SandboxException;
import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
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
}
