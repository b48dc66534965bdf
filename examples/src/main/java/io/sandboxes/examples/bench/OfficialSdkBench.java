package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The official e2b JS SDK through the local server, beside raw Docker on the same image in the
 * same run: an echo round trip ({@code commands.run('echo hi')} against a {@code docker exec} of
 * {@code bash -l -c 'echo hi'}) and 50 MB of stdout. Needs Node and npm; installs the SDK version
 * the conformance test pins into {@code target/sdk-bench} on first use.
 *
 * <p>It runs the script twice: once straight at the server, once through {@code replay-proxy.mjs},
 * which answers the 50 MB command from memory after recording it, so the second figure is the
 * SDK's own ceiling whatever the server does. Each pass also reports MB per CPU-second of the
 * SDK's process, which a busy machine disturbs less than wall time.
 *
 * <p>Arguments: the folder holding the pinned {@code package.json} and {@code package-lock.json}
 * (default {@code ../local/src/test/node}, from the examples module).
 */
public final class OfficialSdkBench {
  private OfficialSdkBench() {}

  public static void main(String[] args) throws Exception {
    Path pinned = Path.of(args.length > 0 ? args[0] : "../local/src/test/node").toAbsolutePath().normalize();
    Path work = Path.of("target", "sdk-bench").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json")) {
      Files.copy(pinned.resolve(f), work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
    }
    for (String f : List.of("sdk-bench.mjs", "replay-proxy.mjs")) {
      Files.copy(Path.of("src", "main", "node", f), work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
    }
    if (!Files.isDirectory(work.resolve("node_modules").resolve("e2b"))) {
      run(work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
    }
    long bytes = 50_000_000L;
    try (LocalServer server = LocalServer.builder().build().start(); DockerRuntime docker = DockerRuntime.connect()) {
      String name = "sandboxes-raw-baseline-" + UUID.randomUUID().toString().substring(0, 8);
      String id = docker.createAndStart(new DockerRuntime.ContainerSpec(BaseImage.reference(), name,
          Map.of(DockerRuntime.LABEL_OURS, "true"), List.of(), name, 2, 1L << 30, 1024, Map.of(), null));
      try {
        RawDocker raw = new RawDocker(docker, id);
        double rawEcho = Measure.medianMs(40, raw.echo());
        double rawOut = bytes / 1e6 / (Measure.medianMs(5, raw.stdout(bytes)) / 1e3);
        Map<String, String> env = Map.of("E2B_API_URL", server.apiUrl().toString(), "E2B_SANDBOX_URL", server.sandboxUrl().toString(),
            "E2B_API_KEY", server.apiKey(), "STDOUT_BYTES", Long.toString(bytes));
        JsonNode sdk = figures(run(work, env, "node", "sdk-bench.mjs"));
        Map<String, String> replayed = new HashMap<>(env);
        replayed.put("REPLAY", "1");
        JsonNode ceiling = figures(run(work, replayed, "node", "sdk-bench.mjs"));
        Measure.header("official SDK");
        Measure.row("echo round trip (ms; raw: exec bash -l -c)", rawEcho, sdk.path("echoMs").asDouble());
        Measure.row("50 MB stdout (MB/s)", rawOut, sdk.path("stdoutMBps").asDouble());
        Measure.row("  the SDK's own CPU on it (MB per CPU-second)", rawOut, sdk.path("stdoutCpuMBps").asDouble());
        Measure.row("50 MB stdout replayed from memory (MB/s)", rawOut, ceiling.path("stdoutMBps").asDouble());
        Measure.row("  the SDK's own CPU on it (MB per CPU-second)", rawOut, ceiling.path("stdoutCpuMBps").asDouble());
      } finally {
        docker.remove(id);
      }
    }
  }

  /** The last JSON line the node script printed. */
  private static JsonNode figures(String output) throws IOException {
    return new ObjectMapper().readTree(output.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow(
        () -> new IllegalStateException("the node script printed no figures:\n" + output)));
  }

  private static String run(Path dir, Map<String, String> env, String... command) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
    }
    return out;
  }
}
