package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import io.sandboxes.SandboxException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the locator looks, read from real files in a temporary home (written by hand, or by the
 * docker CLI itself), and what it says about real sockets that do not answer as Docker does.
 */
class DockerLocatorTest {
  @TempDir
  Path home;

  private final Map<String, String> vars = new HashMap<>();
  private final List<AutoCloseable> open = new java.util.ArrayList<>();

  @AfterEach
  void closeListeners() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private DockerLocator.Environment env() {
    return new DockerLocator.Environment(vars::get, home, home, OptionalInt.of(4242));
  }

  private List<String> labels() {
    return DockerLocator.candidates(env()).stream().map(DockerLocator.Candidate::label).toList();
  }

  private void write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text, StandardCharsets.UTF_8);
  }

  /** A context as the docker CLI stores it: meta.json under the SHA-256 of its name. */
  private void context(Path configDir, String name, String host) throws IOException {
    write(configDir.resolve("contexts/meta/" + DockerLocator.sha256(name) + "/meta.json"),
        "{\"Name\":\"" + name + "\",\"Metadata\":{},\"Endpoints\":{\"docker\":{\"Host\":\"" + host + "\",\"SkipTLSVerify\":false}}}");
  }

  @Test
  @DisplayName("with nothing configured: the default socket, then Docker Desktop's, then rootless Docker's for this uid")
  void defaults() {
    assertThat(labels()).containsExactly(
        "unix:///var/run/docker.sock (the default socket)",
        "unix://" + home + "/.docker/run/docker.sock (Docker Desktop)",
        "unix://" + home + "/.docker/desktop/docker.sock (Docker Desktop)",
        "unix:///run/user/4242/docker.sock (rootless Docker)");
  }

  @Test
  @DisplayName("Testcontainers' docker.host comes first, then the CLI's current context, then the sockets; $XDG_RUNTIME_DIR adds one, each place once")
  void order() throws IOException {
    write(home.resolve(".testcontainers.properties"), "docker.client.strategy=whatever\ndocker.host=tcp\\://127.0.0.1\\:2375\n");
    write(home.resolve(".docker/config.json"), "{\"auths\":{},\"currentContext\":\"colima\"}");
    context(home.resolve(".docker"), "colima", "unix:///somewhere/colima/docker.sock");
    vars.put("XDG_RUNTIME_DIR", "/run/user/4242");
    assertThat(labels()).containsExactly(
        "tcp://127.0.0.1:2375 (docker.host in " + home.resolve(".testcontainers.properties") + ")",
        "unix:///somewhere/colima/docker.sock (docker context 'colima' (currentContext in " + home.resolve(".docker/config.json") + "))",
        "unix:///var/run/docker.sock (the default socket)",
        "unix:///run/user/4242/docker.sock (rootless Docker, in $XDG_RUNTIME_DIR)",
        "unix://" + home + "/.docker/run/docker.sock (Docker Desktop)",
        "unix://" + home + "/.docker/desktop/docker.sock (Docker Desktop)");
  }

  @Test
  @DisplayName("DOCKER_HOST, when set, is the only place looked, as with the docker CLI; tcp:// without a port means 2375")
  void dockerHostAlone() throws IOException {
    write(home.resolve(".testcontainers.properties"), "docker.host=unix:///elsewhere.sock\n");
    vars.put("DOCKER_HOST", "tcp://127.0.0.1");
    assertThat(labels()).containsExactly("DOCKER_HOST=tcp://127.0.0.1:2375");
    vars.put("DOCKER_HOST", "unix:///a path/with spaces.sock");
    List<DockerLocator.Candidate> c = DockerLocator.candidates(env());
    assertThat(c).singleElement().satisfies(x -> assertThat(x.host().getPath()).isEqualTo("/a path/with spaces.sock"));
    vars.put("DOCKER_HOST", " ");
    assertThat(labels()).as("a blank DOCKER_HOST is unset, as for the CLI").contains("unix:///var/run/docker.sock (the default socket)");
  }

  @Test
  @DisplayName("DOCKER_CONTEXT beats currentContext, DOCKER_CONFIG moves the CLI's folder, and 'default' means no context")
  void contextSelection() throws IOException {
    Path config = home.resolve("cli-config");
    vars.put("DOCKER_CONFIG", config.toString());
    write(config.resolve("config.json"), "{\"currentContext\":\"from-file\"}");
    context(config, "from-file", "unix:///from/file.sock");
    context(config, "from-env", "tcp://127.0.0.1:12375");
    assertThat(labels().get(0)).isEqualTo("unix:///from/file.sock (docker context 'from-file' (currentContext in " + config.resolve("config.json") + "))");
    vars.put("DOCKER_CONTEXT", "from-env");
    assertThat(labels().get(0)).isEqualTo("tcp://127.0.0.1:12375 (docker context 'from-env' (DOCKER_CONTEXT))");
    vars.put("DOCKER_CONTEXT", "default");
    assertThat(labels().get(0)).isEqualTo("unix:///var/run/docker.sock (the default socket)");
  }

  @Test
  @DisplayName("a context made and selected by the docker CLI itself is found where the CLI put it")
  void contextWrittenByTheCli() throws Exception {
    assumeTrue(onPath("docker"), "needs the docker CLI");
    Path config = home.resolve("cli");
    cli("--config", config.toString(), "context", "create", "made-by-cli", "--docker", "host=unix:///run/made-by-cli.sock");
    cli("--config", config.toString(), "context", "use", "made-by-cli");
    vars.put("DOCKER_CONFIG", config.toString());
    assertThat(labels().get(0)).startsWith("unix:///run/made-by-cli.sock (docker context 'made-by-cli' (currentContext in ");
  }

  @Test
  @DisplayName("a context that is named but missing, and an unreadable config, are reported, and the sockets are still tried")
  void brokenContext() throws IOException {
    vars.put("DOCKER_CONTEXT", "gone");
    String meta = home.resolve(".docker/contexts/meta/" + DockerLocator.sha256("gone") + "/meta.json").toString();
    DockerLocator.Candidate c = DockerLocator.candidates(env()).get(0);
    assertThat(c.label()).isEqualTo("docker context 'gone' (DOCKER_CONTEXT)");
    assertThat(c.problem()).isEqualTo("no such context (" + meta + " does not exist)");
    vars.remove("DOCKER_CONTEXT");
    write(home.resolve(".docker/config.json"), "{not json");
    assertThat(DockerLocator.candidates(env()).get(0).problem()).startsWith(home.resolve(".docker/config.json") + " is unreadable: ");
    assertThat(labels()).contains("unix:///var/run/docker.sock (the default socket)");
  }

  @Test
  @DisplayName("a slow read of the environment (a loaded machine's cold start) spends none of the probes' budget")
  void budgetStartsAtTheFirstProbe() {
    assumeTrue(Files.exists(Path.of("/var/run/docker.sock")), "needs Docker on its default socket");
    long slow = DockerLocator.BUDGET.toMillis() + 500;
    DockerLocator.Environment slowEnv = new DockerLocator.Environment(name -> {
      if (name.equals("DOCKER_HOST")) {
        try {
          Thread.sleep(slow); // stands for a JVM that takes this long to get to its first probe
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return "unix:///var/run/docker.sock";
      }
      return vars.get(name);
    }, home, home, OptionalInt.of(4242));
    assertThat(DockerLocator.locate(slowEnv).host()).isEqualTo(URI.create("unix:///var/run/docker.sock"));
  }

  @Test
  @DisplayName("the real Docker engine answers the ping, with the API version it speaks (as docker-java then sees it)")
  void realDocker() throws Exception {
    assumeTrue(Files.exists(Path.of("/var/run/docker.sock")), "needs Docker on its default socket");
    vars.put("DOCKER_HOST", "unix:///var/run/docker.sock");
    DockerLocator.Found found = DockerLocator.locate(env());
    assertThat(found.host()).isEqualTo(URI.create("unix:///var/run/docker.sock"));
    assertThat(found.source()).isEqualTo("DOCKER_HOST");
    try (DockerRuntime docker = DockerRuntime.connect(env())) {
      String daemonMax = docker.client().versionCmd().exec().getApiVersion();
      assertThat(found.apiVersion()).isEqualTo(DockerLocator.apiVersionFor(daemonMax));
    }
    assertThat(DockerLocator.unavailableReason(env())).isEmpty();
  }

  @Test
  @DisplayName("nothing is cached: a lookup that failed does not stop the next one from finding an engine that has appeared since")
  void retryAfterFailure() throws Exception {
    assumeTrue(Files.exists(Path.of("/var/run/docker.sock")), "needs Docker on its default socket");
    Path socket = home.resolve("later.sock");
    assertThat(fail("unix://" + socket).message()).contains(": no such socket.");
    Files.createSymbolicLink(socket, Path.of("/var/run/docker.sock")); // the engine "starts"
    try (DockerRuntime docker = DockerRuntime.connect(env())) {
      assertThat(docker.engine().host().getPath()).isEqualTo(socket.toString());
      docker.client().pingCmd().exec(); // throws unless the engine answers
    }
  }

  @Test
  @DisplayName("the API version is the engine's newest, capped at 1.44, and 1.32 when it does not say")
  void apiVersion() {
    assertThat(DockerLocator.apiVersionFor("1.41")).isEqualTo("1.41");
    assertThat(DockerLocator.apiVersionFor("1.44")).isEqualTo("1.44");
    assertThat(DockerLocator.apiVersionFor("1.52")).isEqualTo("1.44");
    assertThat(DockerLocator.apiVersionFor("2.0")).isEqualTo("1.44");
    assertThat(DockerLocator.apiVersionFor(null)).isEqualTo("1.32");
    assertThat(DockerLocator.apiVersionFor("garbage")).isEqualTo("1.32");
  }

  /** What a lookup restricted to DOCKER_HOST says, and how long it took. */
  private record Failure(String message, Duration took) {}

  private Failure fail(String dockerHost) {
    vars.put("DOCKER_HOST", dockerHost);
    long t = System.nanoTime();
    Throwable[] thrown = new Throwable[1];
    assertThatThrownBy(() -> DockerLocator.locate(env())).isInstanceOf(SandboxException.class).satisfies(e -> thrown[0] = e);
    Duration took = Duration.ofNanos(System.nanoTime() - t);
    String m = thrown[0].getMessage();
    assertThat(m).startsWith("the local runtime needs a Docker engine, and none answered. Tried DOCKER_HOST=")
        .endsWith("Start Docker (e.g. `sudo systemctl start docker`, or `sudo dockerd &`), "
            + "or set DOCKER_HOST to where it listens (e.g. unix:///path/to/docker.sock or tcp://127.0.0.1:2375).");
    assertThat(DockerLocator.unavailableReason(env())).hasValueSatisfying(r -> assertThat(r).startsWith("no Docker engine is reachable. Tried DOCKER_HOST="));
    return new Failure(m, took);
  }

  @Test
  @DisplayName("a socket path with nothing there, a file that is not a socket, and a socket nobody listens on each say so at once")
  void unixFailures() throws IOException {
    Path missing = home.resolve("missing.sock");
    assertThat(fail("unix://" + missing).message()).contains("DOCKER_HOST=unix://" + missing + ": no such socket.");
    Path file = home.resolve("file.sock");
    Files.writeString(file, "");
    assertThat(fail("unix://" + file).message()).contains("DOCKER_HOST=unix://" + file + ": exists but is not a socket.");
    Path stale = home.resolve("stale.sock");
    try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      s.bind(UnixDomainSocketAddress.of(stale)); // closing leaves the file, as a crashed daemon does
    }
    Failure f = fail("unix://" + stale);
    assertThat(f.message()).contains("DOCKER_HOST=unix://" + stale + ": connection refused (nothing listens on it).");
    assertThat(f.took()).isLessThan(Duration.ofSeconds(1));
  }

  @Test
  @DisplayName("a unix socket that accepts and never answers costs 2 s, and says 'no answer within 2 s'")
  void unixSilent() throws IOException {
    Path silent = home.resolve("silent.sock");
    ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    open.add(s);
    s.bind(UnixDomainSocketAddress.of(silent));
    Failure f = fail("unix://" + silent);
    assertThat(f.message()).contains("DOCKER_HOST=unix://" + silent + ": no answer within 2 s.");
    assertThat(f.took()).isBetween(Duration.ofMillis(1900), Duration.ofMillis(3000));
  }

  @Test
  @DisplayName("tcp: a closed port is refused, a silent listener gets no answer, an HTTP server that is not Docker is named as such")
  void tcpFailures() throws IOException {
    // a port bound but not listening refuses connections, and while it is held (no address
    // reuse) no other process can start listening there: a port merely closed again was taken
    // by another test's server once, which then reset the connection instead
    try (java.net.Socket holder = new java.net.Socket()) {
      holder.setReuseAddress(false);
      holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int closed = holder.getLocalPort();
      assertThat(fail("tcp://127.0.0.1:" + closed).message()).contains("DOCKER_HOST=tcp://127.0.0.1:" + closed + ": connection refused.");
    }

    ServerSocket silent = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
    open.add(silent);
    Failure f = fail("tcp://127.0.0.1:" + silent.getLocalPort());
    assertThat(f.message()).contains("DOCKER_HOST=tcp://127.0.0.1:" + silent.getLocalPort() + ": no answer within 2 s.");
    assertThat(f.took()).isLessThan(Duration.ofMillis(3000));

    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    open.add(() -> http.stop(0));
    http.createContext("/", x -> {
      x.sendResponseHeaders(404, -1);
      x.close();
    });
    http.start();
    int port = http.getAddress().getPort();
    assertThat(fail("tcp://127.0.0.1:" + port).message())
        .contains("DOCKER_HOST=tcp://127.0.0.1:" + port + ": answered 'HTTP/1.1 404 Not Found', which is not how Docker answers GET /_ping.");
  }

  @Test
  @DisplayName("TLS, ssh:// and unknown kinds of address are refused without being tried, each saying why")
  void refused() {
    vars.put("DOCKER_TLS_VERIFY", "1");
    assertThat(fail("tcp://127.0.0.1:2376").message()).contains("DOCKER_HOST=tcp://127.0.0.1:2376: DOCKER_TLS_VERIFY is set, and the local runtime cannot speak TLS");
    vars.remove("DOCKER_TLS_VERIFY");
    assertThat(fail("ssh://me@example.invalid").message()).contains("DOCKER_HOST=ssh://me@example.invalid: the local runtime cannot reach Docker over ssh://");
    assertThat(fail("unix://").message()).contains("DOCKER_HOST=unix://: names no socket.");
    assertThat(fail("npipe:////./pipe/docker_engine").message()).contains("DOCKER_HOST=npipe:////./pipe/docker_engine: the local runtime does not support Windows named pipes.");
    assertThat(fail("fd://3").message()).contains("DOCKER_HOST=fd://3: not an address the local runtime understands (unix:// or tcp://).");
  }

  @Test
  @DisplayName("two silent candidates share one 3 s budget: the second gets what is left, later ones are not tried, and missing sockets are still named")
  void budget() throws IOException {
    ServerSocketChannel a = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    ServerSocketChannel b = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    open.add(a);
    open.add(b);
    a.bind(UnixDomainSocketAddress.of(home.resolve("a.sock")));
    b.bind(UnixDomainSocketAddress.of(home.resolve("b.sock")));
    write(home.resolve(".testcontainers.properties"), "docker.host=unix://" + home.resolve("a.sock") + "\n");
    vars.put("DOCKER_CONTEXT", "b");
    context(home.resolve(".docker"), "b", "unix://" + home.resolve("b.sock"));
    long t = System.nanoTime();
    String reason = DockerLocator.unavailableReason(env()).orElseThrow();
    Duration took = Duration.ofNanos(System.nanoTime() - t);
    assertThat(took).isBetween(Duration.ofMillis(2900), Duration.ofMillis(4000));
    assertThat(reason).contains("a.sock (docker.host in " + home.resolve(".testcontainers.properties") + "): no answer within 2 s;")
        .containsPattern("b\\.sock \\(docker context 'b' \\(DOCKER_CONTEXT\\)\\): no answer within (0\\.\\d|1(\\.0)?) s;")
        .contains(home.resolve(".docker/run/docker.sock") + " (Docker Desktop): no such socket");
    if (Files.exists(Path.of("/var/run/docker.sock"))) {
      assertThat(reason).contains("unix:///var/run/docker.sock (the default socket): not tried: the 3 s for finding Docker were spent on the ones before");
    }
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  private static void cli(String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("docker"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
  }
}
