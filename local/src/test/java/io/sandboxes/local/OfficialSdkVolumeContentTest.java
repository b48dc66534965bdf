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
 * Issue 25, item 5, through the official {@code e2b} JS SDK (pinned in
 * {@code src/test/node/package.json}): {@code Volume}'s content calls sent where
 * {@code E2B_VOLUME_API_URL} says (the local server, as {@code serve} prints it), authorized by
 * the volume's token. Node and npm are required; without them this test fails rather than
 * skipping.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkVolumeContentTest {

  @Test
  @Timeout(value = 8, unit = TimeUnit.MINUTES)
  @DisplayName("the official SDK's volume content calls against the local server, with the volume's token")
  void volumeContentThroughTheOfficialSdk(LocalServer server) throws Exception {
    NodeScripts node = NodeScripts.install("node-volume-content", "volume-content.mjs");
    String out = node.run(NodeScripts.env(server, "E2B_VOLUME_API_URL", server.apiUrl().toString()), Duration.ofMinutes(6),
        "node", "volume-content.mjs");
    assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
    Map<String, String> steps = NodeScripts.steps(out);
    assertThat(steps).as("the script printed:\n%s", out)
        .containsEntry("makeDir", "directory /notes/inner 777")
        .containsEntry("writeFile", "file 23 9090 true")
        .containsEntry("readFile", "written by the node sdk")
        .containsEntry("readBytes", "23")
        .containsEntry("list", "/notes,/notes/a.txt,/notes/inner")
        .containsEntry("getInfo", "directory")
        .containsEntry("exists", "true false")
        .containsEntry("updateMetadata", "600")
        .containsEntry("missing", "VolumePathNotFoundError")
        .containsEntry("connect", "written by the node sdk")
        .containsEntry("removed", "false")
        .containsEntry("destroy", "true")
        .containsEntry("done", "ok");
    assertThat(steps.get("forged")).startsWith("AuthenticationError");
  }
}
