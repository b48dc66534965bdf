package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.CodeContext;
import io.sandboxes.ExecOptions;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.CodeInterpreterImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The code interpreter's service as E2B runs it: its kernels are root's (a context may work in
 * {@code /root}), it answers at every local name inside the sandbox, and when it is killed it is
 * started again, as E2B's systemd units restart theirs, with the kernels of the killed one ended.
 */
@ExtendWith(SharedServer.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CodeInterpreterServiceTest {

  private static LiveSandbox create(E2BApi e2b) {
    try (DockerRuntime docker = DockerRuntime.connect()) {
      CodeInterpreterImage.ensure(docker, BaseImage.ensure(docker, System.err::println), System.err::println);
    }
    return e2b.create(SandboxSpec.of(SandboxSpec.CODE_INTERPRETER_TEMPLATE));
  }

  @Test
  @DisplayName("kernels run as root: a context works in /root; one in a folder that is not there is refused by name")
  void kernelsAreRoots(E2BApi e2b) {
    try (LiveSandbox sandbox = create(e2b)) {
      assertThat(sandbox.runCode("import os; os.getuid()").text()).isEqualTo("0");
      assertThat(sandbox.runCode("import os; os.getcwd()").text()).isEqualTo("/home/user");
      CodeContext root = sandbox.createCodeContext("python", "/root");
      assertThat(root.cwd()).isEqualTo("/root");
      assertThat(sandbox.runCode("import os; os.getcwd()", RunCodeOptions.defaults().inContext(root)).text()).isEqualTo("/root");
      assertThatThrownBy(() -> sandbox.createCodeContext("python", "/no/such/folder"))
          .isInstanceOf(SandboxException.class).hasMessageContaining("/no/such/folder");
    }
  }

  @Test
  @DisplayName("killed, the service comes back (within the time a start command is given), answering at 0.0.0.0 inside, and the killed one's kernel is gone")
  void restartedAfterAKill(E2BApi e2b) {
    try (LiveSandbox sandbox = create(e2b)) {
      assertThat(sandbox.runCode("x = 1; x").text()).isEqualTo("1");
      String health = "curl -s -o /dev/null -w '%{http_code}' http://0.0.0.0:49999/health";
      assertThat(sandbox.exec(health).stdout()).isEqualTo("200");
      String kernels = "pgrep -c -f '[i]pykernel_launcher' || true";
      assertThat(sandbox.exec(kernels).stdout().strip()).isEqualTo("1");

      sandbox.exec("kill -9 $(pgrep -f '[c]ode-interpreter/bridge.py')", ExecOptions.defaults().withUser("root")).orThrow();

      // idle, the service answers again 1.4 s after the kill; beside two template builds here it
      // took 9 s (its Python imports and the kernel's start, each several times slower), and CI's
      // busier machine once passed 30 s. What this guards (a service never started again, or a
      // supervisor that gave up) never answers; the bound is the server's own for a start command
      // (StartCommand.READY, 90 s)
      await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
          .until(() -> sandbox.exec(health).stdout().equals("200"));
      // a new service, with a new default context: what the killed one held is gone, as on E2B
      assertThat(sandbox.runCode("'x' in globals()").text()).isEqualTo("False");
      assertThat(sandbox.runCode("x = 2; x").text()).isEqualTo("2");
      await().atMost(Duration.ofSeconds(20)).until(() -> sandbox.exec(kernels).stdout().strip().equals("1"));
    }
  }
}
