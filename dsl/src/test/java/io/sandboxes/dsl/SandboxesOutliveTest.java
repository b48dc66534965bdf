package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxState;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sandboxes outlive the JVM that made them: a child JVM, through plain {@code Sandboxes.local()}
 * with {@code -Dsandboxes.local.background=true}, starts the server in the background, creates a
 * sandbox, writes a file, pauses it and exits; this JVM's {@code Sandboxes.local()} then finds
 * that server through the state folder, and the sandbox with its file.
 */
class SandboxesOutliveTest {
  @TempDir
  Path stateRoot;

  @AfterEach
  void stopBackgroundServer() throws Exception {
    Optional<Long> pid = announcedPid();
    if (pid.isPresent()) {
      Optional<ProcessHandle> p = ProcessHandle.of(pid.get());
      if (p.isPresent()) {
        p.get().destroy();
        p.get().onExit().get(60, TimeUnit.SECONDS);
      }
    }
  }

  private Optional<Long> announcedPid() throws Exception {
    Path file = stateRoot.resolve("server.json");
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    String json = Files.readString(file);
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"pid\":(\\d+)").matcher(json);
    return m.find() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
  }

  @Test
  @DisplayName("a sandbox paused by a JVM that has exited is found by the next JVM's Sandboxes.local(), with its file")
  void pausedSandboxOutlivesItsJvm() throws Exception {
    String content = "kept " + System.nanoTime();
    Child child = child(List.of("-Dsandboxes.local.background=true", "-Dsandboxes.local.warm-pool-max=3"), "pause", content);
    Map<String, String> said = child.said();
    String id = said.get("id");
    assertThat(id).as("the child printed its sandbox's id; its output:\n%s", child.output()).isNotBlank();
    assertThat(said.get("reach")).startsWith("Sandboxes.local().connect(\"" + id + "\") reaches it");

    // the server the child started runs on in a process of its own, announced for this user only
    Path file = stateRoot.resolve("server.json");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    long serverPid = announcedPid().orElseThrow();
    assertThat(serverPid).isNotEqualTo(child.pid()).isNotEqualTo(ProcessHandle.current().pid());
    assertThat(ProcessHandle.of(serverPid)).isPresent().get().matches(ProcessHandle::isAlive);
    // started with the pool's maximum the child's property set
    assertThat(ProcessHandle.of(serverPid).orElseThrow().info().arguments().map(List::of).orElseThrow())
        .containsSubsequence("--warm-pool-max", "3");

    // reuse(true): the build's surefire sets sandboxes.local.reuse=false for every other test
    try (SandboxClient sandboxes = Sandboxes.local(o -> o.reuse(true).stateRoot(stateRoot))) {
      assertThat(sandboxes.provider().apiUrl().toString()).isEqualTo(said.get("api"));
      assertThat(sandboxes.howToReach(id)).startsWith("Sandboxes.local().connect(");
      assertThat(sandboxes.provider().describe(id)).get().extracting(io.sandboxes.SandboxInfo::state).isEqualTo(SandboxState.PAUSED);
      LiveSandbox sandbox = sandboxes.connect(id);
      try {
        assertThat(sandbox.readFile("/home/user/kept.txt")).isEqualTo(content);
      } finally {
        sandbox.close();
      }
    }
    // closing this client left the server running: it is not this JVM's
    assertThat(ProcessHandle.of(serverPid)).isPresent().get().matches(ProcessHandle::isAlive);

    // stopping it (SIGTERM, as sandboxes-local stop sends) withdraws its announcement
    ProcessHandle server = ProcessHandle.of(serverPid).orElseThrow();
    server.destroy();
    server.onExit().get(60, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(file));
  }

  @Test
  @DisplayName("a JVM that exits without closing Sandboxes.local() leaves no container of its server: not its sandbox, not its pool")
  void inProcessServerEndsAtExit() throws Exception {
    Child child = child(List.of("-Dsandboxes.local.reuse=false"), "exit");
    String server = child.said().get("server");
    assertThat(server).as("the child's output:\n%s", child.output()).startsWith("inproc-");
    // what there was to leave: its sandbox and the two members of its pool
    assertThat(Integer.parseInt(child.said().get("seen"))).isGreaterThanOrEqualTo(3);
    try {
      // the child waited for its two pool members and its sandbox before it exited
      assertThat(OutliveChild.docker("ps", "-a", "--filter", "label=io.sandboxes.server=" + server, "--filter",
          "label=io.sandboxes.local=true", "--format", "{{.Names}}")).isEmpty();
    } finally {
      for (String c : OutliveChild.docker("ps", "-aq", "--filter", "label=io.sandboxes.server=" + server)) {
        OutliveChild.docker("rm", "-f", c);
      }
    }
  }

  @Test
  @DisplayName("howToReach says what each kind of client can promise: a server in this JVM ends with it")
  void howToReach() {
    try (SandboxClient inProcess = Sandboxes.local(o -> o.reuse(false).warmPool(0))) {
      assertThat(inProcess.howToReach("abc")).startsWith("it ends when this JVM exits")
          .contains("-Dsandboxes.local.background=true").contains("Sandboxes.local().connect(\"abc\")");
    }
    try (SandboxClient e2b = Sandboxes.e2b(Map.of())) {
      assertThat(e2b.howToReach("abc")).startsWith("connect(\"abc\") on a provider for https://api.e2b.app")
          .contains("Sandboxes.e2b()").doesNotContain("JVM exits");
    }
    try (SandboxClient at = Sandboxes.at(java.net.URI.create("http://127.0.0.1:1"), java.net.URI.create("http://127.0.0.1:2"), "k")) {
      assertThat(at.howToReach("abc")).startsWith("Sandboxes.at(..).connect(\"abc\")").doesNotContain("k\"");
    }
  }

  /** A child JVM that has exited by itself with status 0, and what it printed. */
  private record Child(long pid, String output) {
    Map<String, String> said() {
      return SandboxesOutliveTest.said(output);
    }
  }

  private Child child(List<String> properties, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(properties);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), OutliveChild.class.getName()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("SANDBOXES_STATE_DIR", stateRoot.toString());
    pb.environment().remove("SANDBOXES_LOCAL_URL");
    Process p = pb.start();
    // the child's output, read as it comes so that a full pipe never blocks it
    StringBuilder output = new StringBuilder();
    Thread reader = Thread.ofVirtual().start(() -> {
      try {
        output.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } catch (java.io.IOException e) {
        output.append("(reading failed: ").append(e).append(')');
      }
    });
    boolean exited = p.waitFor(5, TimeUnit.MINUTES);
    if (!exited) {
      p.destroyForcibly();
    }
    reader.join(Duration.ofSeconds(10));
    assertThat(exited).as("the child JVM exits by itself; its output:\n%s", output).isTrue();
    assertThat(p.exitValue()).as("the child's exit; its output:\n%s", output).isZero();
    return new Child(p.pid(), output.toString());
  }

  private static Map<String, String> said(String output) {
    Map<String, String> out = new java.util.HashMap<>();
    for (String line : output.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0 && line.substring(0, eq).matches("id|api|reach|server|seen")) {
        out.put(line.substring(0, eq), line.substring(eq + 1).strip());
      }
    }
    return out;
  }
}
