package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
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
    Path work = Path.of("target", "node-volume-content").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json", "volume-content.mjs")) {
      Files.copy(Path.of("src", "test", "node", f), work.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Map<String, String> env = Map.of("E2B_API_URL", server.apiUrl().toString(), "E2B_SANDBOX_URL", server.sandboxUrl().toString(),
        "E2B_API_KEY", server.apiKey(), "E2B_VOLUME_API_URL", server.apiUrl().toString());
    String install = run(work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
    assertThat(install).startsWith("exit 0");
    String out = run(work, env, "node", "volume-content.mjs");
    assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
    Map<String, String> steps = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      int i = line.indexOf(": ");
      if (i > 0) {
        steps.put(line.substring(0, i), line.substring(i + 2));
      }
    }
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

  /** @return {@code exit <code>} and then the process's output */
  private static String run(Path work, Map<String, String> env, String... cmd) throws Exception {
    Path log = Files.createTempFile("node-volume-content-", ".log");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(Duration.ofMinutes(6).toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor();
        return "timeout\n" + Files.readString(log, StandardCharsets.UTF_8);
      }
      return "exit " + p.exitValue() + "\n" + Files.readString(log, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
