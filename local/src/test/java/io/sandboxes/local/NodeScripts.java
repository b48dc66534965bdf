package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A folder under {@code target/} holding the official E2B JS SDK, installed with {@code npm ci}
 * from {@code src/test/node}'s pinned {@code package.json} and lock, and the scripts a test runs
 * there with node. Node and npm are required: without them the install fails the test.
 */
final class NodeScripts {
  private final Path work;

  private NodeScripts(Path work) {
    this.work = work;
  }

  /** Copies the package files and {@code scripts} from {@code src/test/node} to {@code target/<folder>} and installs the SDK. */
  static NodeScripts install(String folder, String... scripts) throws Exception {
    NodeScripts node = new NodeScripts(Path.of("target", folder).toAbsolutePath());
    Files.createDirectories(node.work);
    for (String f : concat("package.json", "package-lock.json", scripts)) {
      Files.copy(Path.of("src", "test", "node", f), node.work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
    }
    String out = node.run(Map.of(), Duration.ofMinutes(6), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
    assertThat(out).as("npm ci printed:\n%s", out).startsWith("exit 0");
    return node;
  }

  private static String[] concat(String a, String b, String[] rest) {
    String[] all = new String[rest.length + 2];
    all[0] = a;
    all[1] = b;
    System.arraycopy(rest, 0, all, 2, rest.length);
    return all;
  }

  /** The variables that point the official SDK at {@code server}, and {@code more}. */
  static Map<String, String> env(LocalServer server, String... more) {
    Map<String, String> env = new HashMap<>(Map.of("E2B_API_URL", server.apiUrl().toString(),
        "E2B_SANDBOX_URL", server.sandboxUrl().toString(), "E2B_API_KEY", server.apiKey()));
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return env;
  }

  /**
   * Runs a command in the folder, its output and errors together.
   *
   * @return {@code exit <code>} and then what it printed, or {@code timeout} and what it printed
   *     when it did not end within {@code limit} (it is killed)
   */
  String run(Map<String, String> env, Duration limit, String... command) throws Exception {
    Path log = Files.createTempFile("node-", ".log");
    try {
      ProcessBuilder pb = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor();
        return "timeout\n" + Files.readString(log, StandardCharsets.UTF_8);
      }
      return "exit " + p.exitValue() + "\n" + Files.readString(log, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(log);
    }
  }

  /** What a script printed as {@code step: value} lines, by step, in order. */
  static Map<String, String> steps(String out) {
    Map<String, String> steps = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      int i = line.indexOf(": ");
      if (i > 0) {
        steps.put(line.substring(0, i), line.substring(i + 2));
      }
    }
    return steps;
  }
}
