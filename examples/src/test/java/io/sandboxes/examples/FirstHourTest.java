package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's first hour (issue 9): {@code Sandboxes.local()} in a JVM that has nothing this project's
 * scripts and Surefire set up. The child JVM gets an empty environment ({@code PATH} and
 * {@code HOME} only: no {@code TESTCONTAINERS_*}, no {@code JAVA_HOME}), a fresh home folder (no
 * {@code ~/.testcontainers.properties}, no {@code ~/.docker}) and this test's class path without
 * any SLF4J provider, as in a project that chose no logging backend.
 */
class FirstHourTest {
  private static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  @TempDir
  Path home;

  private record Run(int exitCode, List<String> stdout, List<String> stderr, Duration took) {
    @Override
    public String toString() {
      return "exit " + exitCode + " after " + took.toMillis() + " ms\nstdout:\n" + String.join("\n", stdout)
          + "\nstderr:\n" + String.join("\n", stderr);
    }
  }

  /** This test's class path minus every SLF4J provider (SLF4J 2 service providers and SLF4J 1 bindings). */
  static String classPathWithoutSlf4jProvider(List<String> removed) throws IOException {
    List<String> kept = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (isSlf4jProvider(Path.of(entry))) {
        removed.add(entry);
      } else {
        kept.add(entry);
      }
    }
    return String.join(File.pathSeparator, kept);
  }

  private static boolean isSlf4jProvider(Path entry) throws IOException {
    List<String> markers = List.of("META-INF/services/org.slf4j.spi.SLF4JServiceProvider", "org/slf4j/impl/StaticLoggerBinder.class");
    if (Files.isDirectory(entry)) {
      return markers.stream().anyMatch(m -> Files.exists(entry.resolve(m)));
    }
    if (!Files.isRegularFile(entry)) {
      return false;
    }
    try (ZipFile jar = new ZipFile(entry.toFile())) {
      return markers.stream().anyMatch(m -> jar.getEntry(m) != null);
    }
  }

  private Run run(List<String> prefix, Map<String, String> extraEnv, String mode) throws Exception {
    List<String> removed = new ArrayList<>();
    String cp = classPathWithoutSlf4jProvider(removed);
    assertThat(removed).as("slf4j-simple is on this module's class path, and the child must run without it")
        .anyMatch(e -> e.contains("slf4j-simple"));
    assertThat(cp).as("the child still has SLF4J's API, as every user of the local runtime does").contains("slf4j-api");
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Duser.home=" + home,
        "-cp", cp, FirstHour.class.getName(), mode));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().clear();
    pb.environment().put("PATH", PATH);
    pb.environment().put("HOME", home.toString());
    pb.environment().putAll(extraEnv);
    Path out = Files.createTempFile("first-hour-", ".out");
    Path err = Files.createTempFile("first-hour-", ".err");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    long t = System.nanoTime();
    Process p = pb.start();
    boolean exited = p.waitFor(120, TimeUnit.SECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - t);
    if (!exited) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Run r = new Run(exited ? p.exitValue() : -1, Files.readAllLines(out), Files.readAllLines(err), took);
    Files.deleteIfExists(out);
    Files.deleteIfExists(err);
    assertThat(exited).as("the child exits within 120 s; " + r).isTrue();
    return r;
  }

  @Test
  @DisplayName("Sandboxes.local() in an empty environment with no SLF4J provider runs 'echo hi' and prints nothing else at all")
  void quietFirstRun() throws Exception {
    assumeTrue(Files.exists(Path.of("/var/run/docker.sock")), "needs Docker on its default socket, where a new user's Docker is");
    Run r = run(List.of(), Map.of(), "hi");
    assertThat(r.exitCode()).as(r.toString()).isZero();
    assertThat(r.stdout()).as(r.toString()).containsExactly("hi");
    for (String noise : List.of("SLF4J", "Testcontainers", "testcontainers", "jetty", "Jetty", "restricted method", "ryuk", "Ryuk",
        "auth", "WARNING", "INFO")) {
      assertThat(r.stderr()).as(r.toString()).noneMatch(l -> l.contains(noise));
    }
    // the only lines allowed are the base image build's progress, which starts by saying what it is
    List<String> unexpected = new ArrayList<>();
    boolean building = false;
    for (String line : r.stderr()) {
      if (!building && line.startsWith("[sandboxes-local] building the base image ") && line.contains(" once; this takes about a minute")) {
        building = true;
      } else if (!building || !line.startsWith("[sandboxes-local] ")) {
        unexpected.add(line);
      }
    }
    assertThat(unexpected).as(r.toString()).isEmpty();
  }

  private static final Pattern THREW = Pattern.compile("threw after (\\d+) ms: (.*)");
  private static final Pattern REASON = Pattern.compile("reason after (\\d+) ms: (.*)");

  private static Matcher line(Run r, Pattern p) {
    Matcher m = r.stdout().stream().map(p::matcher).filter(Matcher::matches).findFirst()
        .orElseThrow(() -> new AssertionError("no line matching " + p + "; " + r));
    return m;
  }

  private static final String WHAT_TO_DO = "Start Docker (e.g. `sudo systemctl start docker`, or `sudo dockerd &`), "
      + "or set DOCKER_HOST to where it listens (e.g. unix:///path/to/docker.sock or tcp://127.0.0.1:2375).";

  @Test
  @DisplayName("with the Docker socket covered by /dev/null, Sandboxes.local() fails within 5 s naming the socket and what to do")
  void dockerMissing() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "hiding the Docker socket needs root (a private mount namespace)");
    assumeTrue(Files.exists(Path.of("/var/run/docker.sock")), "this test hides a real Docker socket");
    Run r = run(List.of("unshare", "-m", "--", "sh", "-c", "mount --bind /dev/null /var/run/docker.sock && exec \"$0\" \"$@\""),
        Map.of(), "fails");
    assertThat(r.exitCode()).as(r.toString()).isZero();
    Matcher threw = line(r, THREW);
    assertThat(Long.parseLong(threw.group(1))).as(r.toString()).isLessThan(5000);
    assertThat(threw.group(2)).as(r.toString())
        .startsWith("the local runtime needs a Docker engine, and none answered. Tried unix:///var/run/docker.sock (the default socket): "
            + "exists but is not a socket; ")
        .contains("unix://" + home + "/.docker/run/docker.sock (Docker Desktop): no such socket")
        .endsWith(WHAT_TO_DO);
    Matcher reason = line(r, REASON);
    assertThat(Long.parseLong(reason.group(1))).as(r.toString()).isLessThan(5000);
    assertThat(reason.group(2)).as(r.toString())
        .startsWith("E2B_API_KEY is not set and the local runtime cannot run: no Docker engine is reachable. "
            + "Tried unix:///var/run/docker.sock (the default socket): exists but is not a socket; ")
        .endsWith(WHAT_TO_DO);
    assertThat(r.stderr()).as(r.toString()).isEmpty();
    System.out.println("docker missing: " + threw.group(1) + " ms to fail, " + reason.group(1) + " ms for the reason; " + r.took().toMillis()
        + " ms for the whole child JVM");
  }

  @Test
  @DisplayName("with DOCKER_HOST at a socket that accepts and never answers, Sandboxes.local() fails within 5 s saying 'no answer'")
  void dockerNotAnswering() throws Exception {
    Path socket = home.resolve("silent.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      List<SocketChannel> held = new ArrayList<>();
      Thread acceptor = Thread.ofVirtual().start(() -> {
        try {
          while (true) {
            SocketChannel c = server.accept(); // accepted, read from by nobody, answered never
            synchronized (held) {
              held.add(c);
            }
          }
        } catch (IOException e) {
          // the server closed
        }
      });
      Run r = run(List.of(), Map.of("DOCKER_HOST", "unix://" + socket), "fails");
      server.close();
      acceptor.join(Duration.ofSeconds(5));
      synchronized (held) {
        assertThat(held).as("the child did connect and was left waiting").isNotEmpty();
        for (SocketChannel c : held) {
          c.close();
        }
      }
      assertThat(r.exitCode()).as(r.toString()).isZero();
      Matcher threw = line(r, THREW);
      assertThat(Long.parseLong(threw.group(1))).as(r.toString()).isLessThan(5000);
      assertThat(threw.group(2)).as(r.toString())
          .isEqualTo("the local runtime needs a Docker engine, and none answered. Tried DOCKER_HOST=unix://" + socket
              + ": no answer within 2 s. " + WHAT_TO_DO);
      Matcher reason = line(r, REASON);
      assertThat(Long.parseLong(reason.group(1))).as(r.toString()).isLessThan(5000);
      assertThat(reason.group(2)).contains("DOCKER_HOST=unix://" + socket + ": no answer within 2 s.");
      assertThat(r.stderr()).as(r.toString()).isEmpty();
      System.out.println("docker not answering: " + threw.group(1) + " ms to fail, " + reason.group(1) + " ms for the reason; " + r.took().toMillis()
          + " ms for the whole child JVM");
    }
  }
}
