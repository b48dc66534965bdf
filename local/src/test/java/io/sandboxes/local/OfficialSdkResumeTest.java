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
 * The official {@code e2b} npm SDK's lifecycle {@code {onTimeout: 'pause', autoResume: true}}
 * and {@code getHost(port)}: once paused, a request to the host {@code getHost} names (sent to the
 * server's sandbox address with that Host, as wildcard DNS would) resumes the sandbox and is
 * answered by its service; without {@code autoResume}, E2B's 502 and the sandbox stays paused.
 * Node and npm are required; without them this test fails.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkResumeTest {

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the official JS SDK: getHost(8000) of a paused autoResume sandbox wakes it and is answered; without autoResume, 502 and still paused")
  void getHostWakesThroughOfficialSdk(LocalServer server) throws Exception {
    NodeScripts node = NodeScripts.install("node-resume", "resume.mjs");
    String out = node.run(NodeScripts.env(server), Duration.ofMinutes(3), "node", "resume.mjs");
    assertThat(out).as("resume script output:\n%s", out).startsWith("exit 0");
    Map<String, String> steps = NodeScripts.steps(out);
    assertThat(steps).as(out)
        .containsEntry("lifecycle", "{\"onTimeout\":\"pause\",\"autoResume\":true}")
        .containsEntry("up", "200")
        .containsEntry("host", "8000-<id>.e2b.app")
        .containsEntry("paused", "paused")
        .containsEntry("woke", "200 hello via getHost")
        .containsEntry("after", "running")
        .containsEntry("command", "still here")
        .containsEntry("plain", "502 502")
        .containsEntry("plain.state", "paused")
        .containsEntry("done", "ok");
  }
}
