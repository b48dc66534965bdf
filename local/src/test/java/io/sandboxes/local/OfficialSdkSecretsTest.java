package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 25, items 4 and 6, through the official {@code e2b} JS SDK (pinned in
 * {@code src/test/node/package.json}): {@code Secret.create}, {@code getInfo}, {@code exists},
 * {@code update}, {@code list} and {@code destroy}, and the create fields the local runtime
 * refuses (rules that fill in a secret, {@code iam}, {@code httpsPorts}). Node and npm are
 * required; without them this test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkSecretsTest {

  @Test
  @Timeout(value = 8, unit = TimeUnit.MINUTES)
  @DisplayName("the official SDK's Secret calls against the local server, and its refusals of unserved create fields")
  void secretsThroughTheOfficialSdk(LocalServer server) throws Exception {
    NodeScripts node = NodeScripts.install("node-secrets", "secrets.mjs");
    String out = node.run(NodeScripts.env(server), Duration.ofMinutes(6), "node", "secrets.mjs");
    assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
    Map<String, String> steps = NodeScripts.steps(out);
    assertThat(steps).as("the script printed:\n%s", out)
        .containsEntry("create", "true true 1 {\"owner\":\"sdk\"}")
        .containsEntry("create.dates", "true")
        .containsEntry("create.fields", "createdAt,metadata,name,secretId,updatedAt,version")
        .containsEntry("getInfo", "true true")
        .containsEntry("exists", "true false")
        .containsEntry("update", "2 {} true")
        .containsEntry("create.again", "SecretError 409: Secret cannot be modified in its current state: a secret of that name exists")
        .containsEntry("list", "true")
        .containsEntry("destroy", "true false")
        .containsEntry("destroyed", "SecretNotFoundError")
        .containsEntry("done", "ok");
    assertThat(steps.get("rules")).as("the script printed:\n%s", out).matches(
        "accepted \\{\"api\\.example\\.com\":\\[\\{\"transform\":\\{\"headers\":\\{\"Authorization\":\"Bearer "
            + "\\$\\{e2b\\.secrets\\.sdk-secret-\\d+}\"}}}]}");
    assertThat(steps).containsEntry("rules.value", "false");
    assertThat(steps.get("rules.missing")).startsWith("SandboxError 400: 'rules' fill in secret 'no-such-secret-anywhere', which does not"
        + " exist on this server");
    assertThat(steps.get("iam")).startsWith("SandboxError 400: 'iam' is not supported by the local runtime: workload identity tokens"
        + " are minted by E2B's cloud");
    assertThat(steps.get("httpsPorts")).startsWith("SandboxError 400: 'httpsPorts' is not supported by the local runtime");
  }
}
