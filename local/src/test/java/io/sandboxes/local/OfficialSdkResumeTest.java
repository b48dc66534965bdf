package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
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
    Path work = Path.of("target", "node-resume").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json", "resume.mjs")) {
      Files.copy(Path.of("src", "test", "node", f), work.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Result install = run(work, Map.of(), Duration.ofMinutes(6), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
    assertThat(install.code()).as("npm ci output:\n%s", install.output()).isZero();

    Result result = run(work, Map.of("E2B_API_URL", server.apiUrl().toString(), "E2B_SANDBOX_URL", server.sandboxUrl().toString(),
        "E2B_API_KEY", server.apiKey()), Duration.ofMinutes(3), "node", "resume.mjs");
    String out = result.output();
    assertThat(result.code()).as("resume script output:\n%s", out).isZero();
    Map<String, String> steps = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      int i = line.indexOf(": ");
      if (i > 0) {
        steps.put(line.substring(0, i), line.substring(i + 2));
      }
    }
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

  private record Result(int code, String output) {}

  private static Result run(Path dir, Map<String, String> env, Duration limit, String... command) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Path log = Files.createTempFile("resume-", ".log");
    pb.redirectOutput(log.toFile());
    Process p = pb.start();
    boolean done = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    if (!done) {
      p.destroyForcibly().waitFor();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    return new Result(done ? p.exitValue() : -1, done ? output : output + "\n(killed after " + limit + ")");
  }
}
