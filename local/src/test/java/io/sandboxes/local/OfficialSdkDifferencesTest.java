package io.sandboxes.local;

import static io.sandboxes.local.NodeScripts.steps;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 25's differences from E2B, through the official {@code e2b} JS SDK (pinned in
 * {@code src/test/node/package.json}): {@code differences.mjs} runs one step per call against the
 * local server and this test reads what it printed. Node and npm are required; without them this
 * test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OfficialSdkDifferencesTest {
  private NodeScripts node;
  private LocalServer server;

  @BeforeAll
  void install(LocalServer server) throws Exception {
    this.server = server;
    node = NodeScripts.install("node-differences", "differences.mjs");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("files.write([...]): several files in one multipart request are all written; a refused first part is answered as such while later parts are still being sent, not with a dropped connection")
  void severalFilesInOneWrite() throws Exception {
    String out = run("node", "differences.mjs", "multiwrite");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("multiwrite.paths", "/tmp/multi/0/f0.txt,/home/user/multi/f1.txt,/tmp/multi/2/f2.txt,/home/user/multi/f3.txt,"
            + "/tmp/multi/4/f4.txt,/home/user/multi/f5.txt,/tmp/multi/6/f6.txt,/home/user/multi/f7.txt,/tmp/multi/8/f8.txt,/home/user/multi/f9.txt")
        .containsEntry("multiwrite.read", "file 0|file 1|file 2|file 3|file 4|file 5|file 6|file 7|file 8|file 9")
        .containsEntry("multiwrite.under0", "/0/js/a.txt,/0/js/b/c.txt user,user,user,user,user")
        .containsEntry("multiwrite.refused", "SandboxError: 403: write /sys/refused.txt: Permission denied")
        .containsEntry("multiwrite.laterWritten", "false");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("a watch whose folder is deleted hears, as from E2B's envd, its child's removal and then a removal named \".\", and goes on until stopped")
  void watchOfADeletedFolder() throws Exception {
    String out = run("node", "differences.mjs", "watchgone");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("watchgone.events", "sub:remove,.:remove")
        .containsEntry("watchgone.afterRemoval", "running");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("a watch whose sandbox is killed ends as E2B's SDK reports a sandbox's end (TimeoutError: killed or reached its end of life), not as its folder going away")
  void watchOfAKilledSandbox() throws Exception {
    String out = run("node", "differences.mjs", "watchkill");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("watchkill.event", "before-kill.txt:create")
        .containsEntry("watchkill.exit", "TimeoutError (killed)");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("createSnapshot under a name that exists, while a sandbox made from it runs, adds a new build (E2B) rather than a 409: the name gives the new capture, the older sandbox keeps its own")
  void snapshotNameTakenAgain() throws Exception {
    String out = run("node", "differences.mjs", "snapshot");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("snapshot.again", "same id")
        .containsEntry("snapshot.contents", "version 2|version 1")
        .containsEntry("snapshot.delete", "true");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("a template's RUN step as a user that does not exist fails with E2B's message")
  void runAsUnknownUser() throws Exception {
    String out = run("node", "differences.mjs", "runuser");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("runuser", "BuildError: failed to run command 'whoami': command failed: unauthenticated: invalid username: 'root123'");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("E2B_SANDBOX=true, E2B_SANDBOX_ID and E2B_TEMPLATE_ID are set in every process, as E2B's envd sets them; the sandbox's own envs cannot replace them, a command's own can")
  void identityVariables(io.sandboxes.e2b.E2BApi e2b) throws Exception {
    String out = run("node", "differences.mjs", "identity");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("identity", "true|<id>|base|kept")
        .containsEntry("identity.command", "asked-by-the-command");
    try (io.sandboxes.e2b.LiveSandbox s = e2b.create()) {
      assertThat(s.exec("echo \"$E2B_SANDBOX|$E2B_SANDBOX_ID|$E2B_TEMPLATE_ID\"").stdout()).isEqualTo("true|" + s.id() + "|base\n");
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("commands.connect to a background command that already ended gets its real exit, as E2B's envd serves a retained end (never a made-up exit 0); an unknown pid is not found")
  void connectToAnEndedCommand() throws Exception {
    String out = run("node", "differences.mjs", "connectEnded");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("connectEnded", "CommandExitError 3")
        .containsEntry("connectMissing", "NotFoundError");
  }

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  @DisplayName("a sandbox created from a built template's name reports the template's id as templateID and the name as its alias, and listing by that id finds it")
  void templateIdOfANamedTemplate(io.sandboxes.e2b.E2BApi e2b) throws Exception {
    String out = run("node", "differences.mjs", "templateId");
    assertThat(out).as("the JS SDK printed:\n%s", out).startsWith("exit 0");
    assertThat(steps(out)).as("the JS SDK printed:\n%s", out)
        .containsEntry("templateId.info", "the id the name")
        .containsEntry("templateId.listed", "found")
        .containsEntry("templateId.env", "the id");

    // its own step (not the JS SDK's "echo built"): the JS template just deleted is being swept meanwhile
    String name = "differences-java-" + Long.toString(System.nanoTime(), 36);
    io.sandboxes.template.BuildInfo built = e2b.buildTemplate(io.sandboxes.template.Template.fromTemplate("base").runCmd("echo built " + name), name,
        io.sandboxes.template.BuildOptions.defaults());
    try (io.sandboxes.e2b.LiveSandbox s = e2b.create(io.sandboxes.SandboxSpec.of(name))) {
      io.sandboxes.SandboxInfo info = e2b.info(s.id());
      assertThat(info.templateId()).isEqualTo(built.templateId());
      assertThat(info.alias()).isEqualTo(name);
    } finally {
      e2b.deleteTemplate(built.templateId());
    }
  }

  private String run(String... cmd) throws Exception {
    return node.run(NodeScripts.env(server), Duration.ofMinutes(2), cmd);
  }
}
