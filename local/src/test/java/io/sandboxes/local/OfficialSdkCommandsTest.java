package io.sandboxes.local;

import static io.sandboxes.local.NodeScripts.steps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.ProcessInfo;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24's cross-client test: a background process started through the official {@code e2b} JS
 * SDK (pinned in {@code src/test/node/package.json}) is listed, attached to, written to and killed
 * from Java, and one started from Java is listed, attached to, written to and killed through the
 * JS SDK. Node and npm are required; without them this test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OfficialSdkCommandsTest {
  private static final String JS_SCRIPT = "while read l; do echo \"js-got:$l\"; done";
  private NodeScripts node;
  private LocalServer server;
  private LiveSandbox sandbox;

  @BeforeAll
  void install(LocalServer server, E2BApi e2b) throws Exception {
    this.server = server;
    node = NodeScripts.install("node-commands", "commands-cross.mjs");
    sandbox = e2b.create();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("started by the JS SDK: listed, attached to, written to and killed from Java")
  void startedInJsDrivenFromJava() throws Exception {
    Map<String, String> steps = steps(run("node", "commands-cross.mjs", "start"));
    int pid = Integer.parseInt(steps.getOrDefault("pid", "-1"));
    assertThat(pid).as("the pid the JS SDK printed: %s", steps).isPositive();

    ProcessInfo info = sandbox.commands().list().stream().filter(p -> p.pid() == pid).findFirst()
        .orElseThrow(() -> new AssertionError("the JS SDK's process " + pid + " is not listed"));
    assertThat(info.cmd()).isEqualTo("/bin/bash");
    assertThat(info.args()).containsExactly("-l", "-c", JS_SCRIPT);
    try (CommandHandle attached = sandbox.commands().connect(pid)) {
      sandbox.commands().sendStdin(pid, "from-java\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> attached.stdout().contains("\n"));
      assertThat(attached.stdout()).isEqualTo("js-got:from-java\n");
      assertThat(sandbox.commands().kill(pid)).isTrue();
      ExecResult killed = attached.waitFor();
      assertThat(killed.exitCode()).isEqualTo(-1);
    }
    assertThat(sandbox.commands().kill(pid)).isFalse();
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("started from Java: listed, attached to, written to and killed by the JS SDK")
  void startedInJavaDrivenFromJs() throws Exception {
    String script = "while read l; do echo \"java-got:$l\"; done";
    CommandHandle started = sandbox.commands().start(script, ExecOptions.defaults().withStdin(true).withTimeout(Duration.ofMinutes(2)));
    int pid = started.pid();
    started.disconnect();

    String out = run("node", "commands-cross.mjs", "attach", Integer.toString(pid));
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("listed", "[\"/bin/bash\",\"-l\",\"-c\",\"while read l; do echo \\\"java-got:$l\\\"; done\"]")
        .containsEntry("heard", "java-got:from-js")
        .containsEntry("kill", "true")
        .containsEntry("wait", "CommandExitError -1")
        .containsEntry("kill.again", "false");
    assertThat(sandbox.commands().list()).extracting(ProcessInfo::pid).doesNotContain(pid);
    assertThat(sandbox.commands().kill(pid)).isFalse();
  }

  private String run(String... cmd) throws Exception {
    return node.run(NodeScripts.env(server, "SANDBOX_ID", sandbox.id()), Duration.ofMinutes(2), cmd);
  }
}
