package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.internal.Announcement;
import io.sandboxes.spi.LocalRuntime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@code Sandboxes.local()} finds a server that runs already, and how {@code serve}
 * announces, withdraws and stops itself: real servers, real HTTP, real processes.
 */
class ReuseTest {
  private static final Function<String, String> NONE = name -> null;

  static LocalServer server;
  static LocalServer openByDefault;

  @TempDir
  Path root;

  private final Map<Process, Path> outputs = new java.util.concurrent.ConcurrentHashMap<>();

  @BeforeAll
  static void servers() {
    server = TestRuntime.builder().warmPool(0).build().start();
    openByDefault = TestRuntime.builder().warmPool(0).internetByDefault(true).build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
    openByDefault.close();
  }

  private static LocalRuntime.Options at(Path root) {
    return new LocalRuntime.Options(Map.of(), null, null, null, root);
  }

  private static Function<String, String> env(Map<String, String> vars) {
    return vars::get;
  }

  @Test
  @DisplayName("the announcement is written 0600 and trusted only as its owner's regular file naming a live process on loopback")
  void announcementIsChecked() throws Exception {
    Announcement.write(root, server.apiUrl(), server.sandboxUrl(), server.apiKey(), "t");
    Path file = Announcement.file(root);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    Announcement.Read read = Announcement.read(root);
    assertThat(read.ignored()).isEmpty();
    assertThat(read.server()).get().satisfies(s -> {
      assertThat(s.apiUrl()).isEqualTo(server.apiUrl());
      assertThat(s.pid()).isEqualTo(ProcessHandle.current().pid());
      assertThat(s.toString()).doesNotContain(server.apiKey());
    });

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
    assertThat(Announcement.read(root).ignored()).get().asString().contains("may be read or written by others");
    assertThat(Announcement.read(root).server()).isEmpty();

    Files.delete(file);
    Path elsewhere = Files.createTempFile(root, "real", ".json");
    Files.createSymbolicLink(file, elsewhere);
    assertThat(Announcement.read(root).ignored()).get().asString().contains("is not a regular file");
    Files.delete(file);

    Process gone = new ProcessBuilder("true").start();
    gone.waitFor(30, TimeUnit.SECONDS);
    write(root, "{\"apiUrl\":\"" + server.apiUrl() + "\",\"sandboxUrl\":\"" + server.sandboxUrl() + "\",\"apiKey\":\"k\",\"pid\":"
        + gone.pid() + "}");
    assertThat(Announcement.read(root).ignored()).get().asString().contains("is stale").contains("pid " + gone.pid());

    write(root, "{\"apiUrl\":\"http://10.1.2.3:3000\",\"sandboxUrl\":\"" + server.sandboxUrl() + "\",\"apiKey\":\"k\",\"pid\":"
        + ProcessHandle.current().pid() + "}");
    assertThat(Announcement.read(root).ignored()).get().asString().contains("loopback");
  }

  private static void write(Path root, String json) throws Exception {
    Path f = Announcement.file(root);
    Files.deleteIfExists(f);
    Files.writeString(f, json);
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
  }

  @Test
  @DisplayName("a live announced server is reused, and closing the endpoint leaves it serving")
  void reusesTheAnnouncedServer() throws Exception {
    Announcement.write(root, server.apiUrl(), server.sandboxUrl(), server.apiKey(), "t");
    LocalRuntime.Endpoint e = new LocalRuntimeService().start(at(root), NONE, NONE);
    assertThat(e.outlivesProcess()).isTrue();
    assertThat(e.apiUrl()).isEqualTo(server.apiUrl());
    assertThat(e.sandboxUrl()).isEqualTo(server.sandboxUrl());
    assertThat(e.apiKey()).isEqualTo(server.apiKey());
    e.close();
    assertThat(status(server.apiUrl().resolve("/health"))).isEqualTo(204);
  }

  @Test
  @DisplayName("an announcement whose key the server at its URL refuses is passed over: a server of its own is started")
  void wrongKeyIsNotReused() throws Exception {
    Announcement.write(root, server.apiUrl(), server.sandboxUrl(), "e2b_notthekey", "t");
    LocalRuntime.Endpoint e = new LocalRuntimeService().start(at(root),
        name -> name.equals(LocalRuntimeService.WARM_POOL_PROPERTY) ? "0" : TestRuntime.named().filter(r ->
            name.equals(LocalRuntimeService.RUNTIME_PROPERTY)).orElse(null), NONE);
    try {
      assertThat(e.outlivesProcess()).isFalse();
      assertThat(e.apiUrl()).isNotEqualTo(server.apiUrl());
    } finally {
      e.close();
    }
  }

  @Test
  @DisplayName("SANDBOXES_LOCAL_URL names the only server to use: with its key it is reused; otherwise the start fails, naming it")
  void namedByTheEnvironment() {
    LocalRuntime.Endpoint e = new LocalRuntimeService().start(at(root), NONE,
        env(Map.of("SANDBOXES_LOCAL_URL", server.apiUrl().toString(), "SANDBOXES_LOCAL_API_KEY", server.apiKey())));
    assertThat(e.outlivesProcess()).isTrue();
    assertThat(e.sandboxUrl()).isEqualTo(server.sandboxUrl());
    e.close();

    assertThatThrownBy(() -> new LocalRuntimeService().start(at(root), NONE,
        env(Map.of("SANDBOXES_LOCAL_URL", server.apiUrl().toString(), "SANDBOXES_LOCAL_API_KEY", "e2b_wrong"))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("no sandboxes-local server answered at " + server.apiUrl())
        .hasMessageContaining("SANDBOXES_LOCAL_URL");
    assertThatThrownBy(() -> new LocalRuntimeService().start(at(root), NONE,
        env(Map.of("SANDBOXES_LOCAL_URL", server.apiUrl().toString()))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("SANDBOXES_LOCAL_API_KEY is not");
    assertThatThrownBy(() -> new LocalRuntimeService().start(at(root), NONE,
        env(Map.of("SANDBOXES_LOCAL_URL", "http://10.1.2.3:3000", "SANDBOXES_LOCAL_API_KEY", "k"))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("loopback");
  }

  @Test
  @DisplayName("a server that opens sandboxes by default, or runs another runtime than asked, is refused")
  void unsuitableServersAreRefused() {
    assertThatThrownBy(() -> new LocalRuntimeService().start(at(root), NONE,
        env(Map.of("SANDBOXES_LOCAL_URL", openByDefault.apiUrl().toString(), "SANDBOXES_LOCAL_API_KEY", openByDefault.apiKey()))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("--internet-by-default");
    assertThatThrownBy(() -> new LocalRuntimeService().start(new LocalRuntime.Options(Map.of(), "sandboxes-other", null, null, root),
        NONE, env(Map.of("SANDBOXES_LOCAL_URL", server.apiUrl().toString(), "SANDBOXES_LOCAL_API_KEY", server.apiKey()))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("not on sandboxes-other as asked");
  }

  @Test
  @DisplayName("settings: the warm pool and its maximum from properties, options over properties, and background without reuse refused")
  void settings() {
    Function<String, String> props = name -> switch (name) {
      case LocalRuntimeService.WARM_POOL_PROPERTY -> " base=1, my-template=2 ";
      case LocalRuntimeService.REUSE_PROPERTY -> "false";
      default -> null;
    };
    LocalSettings s = LocalSettings.of(at(root), props, NONE);
    assertThat(s.warmPool()).isEqualTo(Map.of("base", 1, "my-template", 2));
    assertThat(s.reuse()).isFalse();
    assertThat(s.background()).isFalse();
    s = LocalSettings.of(new LocalRuntime.Options(Map.of("base", 0), null, true, true, root), props, NONE);
    assertThat(s.warmPool()).isEqualTo(Map.of("base", 0, "my-template", 2));
    assertThat(s.reuse()).isTrue();
    assertThat(s.background()).isTrue();
    assertThat(s.warmPoolMax()).isNull();
    Function<String, String> maxProps = name -> name.equals(LocalRuntimeService.WARM_POOL_MAX_PROPERTY) ? " 5 " : null;
    assertThat(LocalSettings.of(at(root), maxProps, NONE).warmPoolMax()).isEqualTo(5);
    assertThat(LocalSettings.of(new LocalRuntime.Options(Map.of(), null, null, null, root, 7), maxProps, NONE).warmPoolMax())
        .as("the option over the property").isEqualTo(7);
    assertThatThrownBy(() -> LocalSettings.parseWarmPoolMax("many")).hasMessageContaining("sandboxes.local.warm-pool-max");
    assertThatThrownBy(() -> LocalSettings.parseWarmPoolMax("65")).hasMessageContaining("0 to 64");
    assertThat(LocalSettings.parseWarmPool("0")).isEqualTo(Map.of("base", 0));
    assertThatThrownBy(() -> LocalSettings.parseWarmPool("lots")).hasMessageContaining("sandboxes.local.warm-pool");
    assertThatThrownBy(() -> LocalSettings.parseWarmPool("base=65")).hasMessageContaining("0 to 64");
    assertThatThrownBy(() -> LocalSettings.of(new LocalRuntime.Options(Map.of(), null, false, true, root), NONE, NONE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("background needs reuse");
    // background(true) in code wins over sandboxes.local.reuse=false (as this build's surefire sets it); both properties clash
    assertThat(LocalSettings.of(new LocalRuntime.Options(Map.of(), null, null, true, root), props, NONE).reuse()).isTrue();
    assertThatThrownBy(() -> LocalSettings.of(at(root), name -> name.equals(LocalRuntimeService.REUSE_PROPERTY) ? "false"
        : name.equals(LocalRuntimeService.BACKGROUND_PROPERTY) ? "true" : null, NONE)).hasMessageContaining("background needs reuse");
    assertThat(LocalSettings.of(LocalRuntime.Options.NONE, NONE, env(Map.of("SANDBOXES_STATE_DIR", root.toString())))
        .stateRoot()).isEqualTo(root);
  }

  @Test
  @DisplayName("serve --idle-exit stays up while it has a sandbox, then stops by itself and withdraws its announcement")
  void idleExit() throws Exception {
    // long enough for the first create to come in on a loaded machine: an idle server stops before it
    Process serve = serve("--idle-exit", "8s");
    try {
      Announcement.Server s = awaitAnnounced(serve);
      try (E2BSandboxProvider p = E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey())
          .build()) {
        io.sandboxes.Sandbox sandbox = p.create(SandboxConfig.forProject("idle-exit"));
        // eight idle seconds would stop it: with a sandbox it stays
        await().during(Duration.ofSeconds(11)).atMost(Duration.ofSeconds(25)).until(serve::isAlive);
        sandbox.close();
      }
      assertThat(serve.waitFor(60, TimeUnit.SECONDS)).as("it stops once it has no sandbox").isTrue();
      assertThat(serve.exitValue()).isZero();
      assertThat(Announcement.file(root)).doesNotExist();
    } finally {
      serve.destroyForcibly();
    }
  }

  @Test
  @DisplayName("serve prints the E2B variables, E2B_VOLUME_API_URL among them; sandboxes-local stop stops the announced server (SIGTERM), which withdraws its announcement; with none it says so")
  void stopCommand() throws Exception {
    Process none = main("stop");
    assertThat(none.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(none.exitValue()).isEqualTo(1);
    assertThat(output(none)).contains("no server is announced in " + Announcement.file(root));

    Process serve = serve();
    try {
      Announcement.Server s = awaitAnnounced(serve);
      // its banner names every variable an E2B client reads, the volume content API's among them
      await().atMost(Duration.ofSeconds(30)).until(() -> output(serve).contains("export E2B_VOLUME_API_URL="));
      assertThat(output(serve)).contains("export E2B_API_URL=" + s.apiUrl() + "\n")
          .contains("export E2B_VOLUME_API_URL=" + s.apiUrl() + "\n");
      Process stop = main("stop");
      assertThat(stop.waitFor(90, TimeUnit.SECONDS)).isTrue();
      assertThat(output(stop)).contains("stopped the server at " + s.apiUrl() + " (pid " + serve.pid() + ")");
      assertThat(stop.exitValue()).isZero();
      assertThat(serve.isAlive()).isFalse();
      assertThat(Announcement.file(root)).doesNotExist();
    } finally {
      serve.destroyForcibly();
    }
  }

  private Process serve(String... more) throws Exception {
    List<String> args = new ArrayList<>(List.of("serve", "--port", "0", "--envd-port", "0", "--warm-pool", "0", "--id",
        "reuse-" + Long.toHexString(System.nanoTime())));
    TestRuntime.named().ifPresent(r -> args.addAll(List.of("--runtime", r)));
    args.addAll(List.of(more));
    return main(args.toArray(String[]::new));
  }

  private Process main(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        System.getProperty("java.class.path"), Main.class.getName()));
    command.addAll(List.of(args));
    Path out = Files.createTempFile("reuse-out-", ".txt");
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().put("SANDBOXES_STATE_DIR", root.toString());
    Process p = pb.start();
    outputs.put(p, out);
    return p;
  }

  private String output(Process p) throws Exception {
    return Files.readString(outputs.get(p));
  }

  private Announcement.Server awaitAnnounced(Process serve) {
    return await().atMost(Duration.ofMinutes(2)).until(() -> {
      assertThat(serve.isAlive()).as("serve is running").isTrue();
      return Announcement.read(root).server().filter(s -> s.pid() == serve.pid()).orElse(null);
    }, s -> s != null);
  }

  private static int status(URI uri) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
  }
}
