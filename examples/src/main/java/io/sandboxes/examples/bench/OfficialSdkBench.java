package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The official e2b JS SDK through the local server, beside raw Docker on the same image in the
 * same run: an echo round trip ({@code commands.run('echo hi')} against a {@code docker exec} of
 * {@code bash -l -c 'echo hi'}) and 50 MB of stdout. Needs Node and npm; installs the SDK version
 * the conformance test pins into {@code target/sdk-bench} on first use.
 *
 * <p>The script takes the SDK's own ceiling in the same process, its rounds interleaved with ours
 * (the order turned each round): a second handle on the same sandbox goes through
 * {@code replay-proxy.mjs}, a fake envd that streams the 50 MB command's output from memory in
 * 32 KiB messages, so that figure is what the SDK can take in whatever the server does (issue 26
 * holds ours to 0.9x of it), and the machine's load weighs on both alike. Beside the SDK's echo, the same {@code process.Process/Start} request is sent from Node
 * without the SDK, interleaved with it: through Node's own {@code fetch}, and as prebuilt bytes on a
 * kept-alive socket, which splits the SDK's round trip into its own layers, Node's HTTP client and
 * the server. Each pass also reports MB per CPU-second of the
 * SDK's process, which a busy machine disturbs less than wall time. The echoes are counted after
 * 150 rounds of all three ({@code WARMUPS}), by which the server's own JIT has compiled its exec
 * path, as in a server that has been running a while: with 20 rounds, the server's time on the
 * socket read 4.9 ms where it reads 2.4-3.5 ms warm, and the SDK's echo 0.13x raw.
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
      run(null, work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
    }
    long bytes = 50_000_000L;
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer server = left.keep(LocalServer.builder().build().start());
      String id = left.startRaw(docker);
      try {
        RawDocker raw = new RawDocker(docker, id);
        double rawEcho = Measure.medianMs(40, raw.echo());
        double rawOut = bytes / 1e6 / (Measure.medianMs(5, raw.stdout(bytes)) / 1e3);
        Map<String, String> env = Map.of("E2B_API_URL", server.apiUrl().toString(), "E2B_SANDBOX_URL", server.sandboxUrl().toString(),
            "E2B_API_KEY", server.apiKey(), "STDOUT_BYTES", Long.toString(bytes));
        JsonNode sdk = figures(run(left, work, env, "node", "sdk-bench.mjs"));
        double ourOut = sdk.path("stdoutMBps").asDouble();
        double ceilingOut = sdk.path("ceilingMBps").asDouble();
        Measure.targetHeader("official SDK");
        Measure.row("exec echo round trip (ms; raw exec bash -l -c)", rawEcho, sdk.path("echoMs").asDouble(), "<= 0.12x raw");
        // the same request from Node without the SDK: by its own fetch, and as bytes on a socket (the server's time as
        // Node sees it); the SDK's echo less the fetch is its own layers, the fetch less the socket Node's HTTP client
        Measure.row("  same request, Node's fetch, body read whole (ms; raw)", rawEcho, sdk.path("fetchEchoMs").asDouble(), "");
        Measure.row("  same request, bytes on a Node socket = server (ms; raw)", rawEcho, sdk.path("socketEchoMs").asDouble(), "");
        Measure.row("50 MB stdout (MB/s; raw docker exec)", rawOut, ourOut, "");
        Measure.row("50 MB stdout (MB/s; baseline: the SDK's ceiling)", ceilingOut, ourOut, ">= 0.9x the ceiling");
        Measure.row("the SDK's ceiling: fake envd, 32 KiB messages (MB/s; raw)", rawOut, ceilingOut, "");
        Measure.row("  the SDK's CPU, ours (MB per CPU-s; ceiling's)", sdk.path("ceilingCpuMBps").asDouble(),
            sdk.path("stdoutCpuMBps").asDouble(), "");
      } finally {
        left.removeRaw(docker, id);
      }
    }
  }

  /** The last JSON line the node script printed. */
  private static JsonNode figures(String output) throws IOException {
    return new ObjectMapper().readTree(output.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow(
        () -> new IllegalStateException("the node script printed no figures:\n" + output)));
  }

  /** Runs {@code command}; with {@code left} given, the process is ended too if the benchmark is. */
  private static String run(@org.jspecify.annotations.Nullable Leftovers left, Path dir, Map<String, String> env, String... command)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    if (left != null) {
      left.keep(() -> p.destroyForcibly());
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
    }
    return out;
  }
}
