package io.sandboxes.local;

import io.sandboxes.SandboxException;
import io.sandboxes.local.internal.docker.DockerLocator;
import io.sandboxes.spi.LocalRuntime;
import java.net.URI;

/**
 * Lets {@code Sandboxes.local()} find and start the local server through
 * {@link java.util.ServiceLoader}: it reuses a server already running on this machine (the one
 * {@code SANDBOXES_LOCAL_URL} names, else the one announced in the state root's
 * {@code server.json}), or starts one, in this process or in the background. Not for direct use.
 *
 * @since 0.1
 */
public final class LocalRuntimeService implements LocalRuntime {

  /** Needed by {@link java.util.ServiceLoader}. */
  public LocalRuntimeService() {}

  /**
   * Looks for a Docker engine the way {@link #start()} does (a raw ping of each candidate, a few
   * seconds at most) without starting anything.
   */
  @Override
  public java.util.Optional<String> unavailableReason() {
    try {
      return DockerLocator.unavailableReason(DockerLocator.Environment.system());
    } catch (RuntimeException e) {
      return java.util.Optional.of("looking for a Docker engine failed: " + e);
    }
  }

  /**
   * The system property naming the OCI runtime of the sandboxes {@code Sandboxes.local()} starts,
   * e.g. {@code -Dsandboxes.local.runtime=runsc} for gVisor (see {@link LocalServer.Builder#runtime(String)}).
   */
  public static final String RUNTIME_PROPERTY = "sandboxes.local.runtime";
  /**
   * The system property sizing the warm pool of a server {@code Sandboxes.local()} starts:
   * {@code 0} (off), {@code 3} (of {@code base}), or {@code base=1,my-template=2}.
   */
  public static final String WARM_POOL_PROPERTY = "sandboxes.local.warm-pool";
  /** The system property setting how far each warm pool of a server {@code Sandboxes.local()} starts grows with demand (0 to 64). */
  public static final String WARM_POOL_MAX_PROPERTY = "sandboxes.local.warm-pool-max";
  /** The system property that, {@code false}, keeps {@code Sandboxes.local()} from using a server already running. */
  public static final String REUSE_PROPERTY = "sandboxes.local.reuse";
  /** The system property that, {@code true}, has {@code Sandboxes.local()} start its server in the background. */
  public static final String BACKGROUND_PROPERTY = "sandboxes.local.background";
  /** The environment variable naming a running server's API URL, which {@code Sandboxes.local()} then uses, and no other. */
  public static final String URL_VARIABLE = "SANDBOXES_LOCAL_URL";
  /** The environment variable holding the API key of the server {@link #URL_VARIABLE} names. */
  public static final String KEY_VARIABLE = "SANDBOXES_LOCAL_API_KEY";
  /** The id a server started in the background runs under (its sandboxes' containers carry it). */
  static final String BACKGROUND_ID = "background";
  /** How long a server started in the background waits, with no sandbox and no call, before it stops. */
  static final java.time.Duration BACKGROUND_IDLE_EXIT = java.time.Duration.ofMinutes(30);
  /** How long a start waits for a server it started in the background (the first builds the base image). */
  private static final java.time.Duration BACKGROUND_START = java.time.Duration.ofMinutes(10);
  /** Made after {@link #quietSlf4jWithoutProvider()}: this field is what first makes SLF4J report. */
  private static final org.slf4j.Logger LOG = quietSlf4jWithoutProvider();
  /** One start in the background at a time in this JVM (a file lock is held per process, not per thread). */
  private static final java.util.concurrent.locks.ReentrantLock SPAWNING = new java.util.concurrent.locks.ReentrantLock();

  @Override
  public Endpoint start() {
    return start(Options.NONE);
  }

  @Override
  public Endpoint start(Options options) {
    return start(options, System::getProperty, System::getenv);
  }

  /** {@link #start()} with the system properties read from {@code properties}. */
  Endpoint start(java.util.function.Function<String, @org.jspecify.annotations.Nullable String> properties) {
    return start(Options.NONE, properties, System::getenv);
  }

  /** {@link #start(Options)} with the system properties and the environment read from these. */
  Endpoint start(Options options, java.util.function.Function<String, @org.jspecify.annotations.Nullable String> properties,
      java.util.function.Function<String, @org.jspecify.annotations.Nullable String> environment) {
    LocalSettings settings = LocalSettings.of(options, properties, environment);
    if (settings.reuse()) {
      String url = LocalSettings.blankToNull(environment.apply(URL_VARIABLE));
      if (url != null) {
        return named(url, environment.apply(KEY_VARIABLE), settings);
      }
      java.util.Optional<Endpoint> found = announced(settings, settings.background());
      if (found.isPresent()) {
        return found.get();
      }
    }
    if (settings.background()) {
      return background(settings);
    }
    return inProcess(settings);
  }

  private Endpoint inProcess(LocalSettings settings) {
    LocalServer.Builder builder = LocalServer.builder().progress(line -> System.err.println("[sandboxes-local] " + line));
    if (settings.runtime() != null) {
      builder.runtime(settings.runtime());
    }
    settings.warmPool().forEach(builder::warmPool);
    if (settings.warmPoolMax() != null) {
      builder.warmPoolMax(settings.warmPoolMax());
    }
    LocalServer server = builder.build().start();
    // a program that exits without closing the client must not leave its sandboxes and warm pool
    // running with nobody to reach them or to end them at their deadlines: nothing adopts them
    Thread atExit = new Thread(server::close, "sandboxes-local-exit");
    Runtime.getRuntime().addShutdownHook(atExit);
    return new Endpoint() {
      @Override
      public URI apiUrl() {
        return server.apiUrl();
      }

      @Override
      public URI sandboxUrl() {
        return server.sandboxUrl();
      }

      @Override
      public String apiKey() {
        return server.apiKey();
      }

      @Override
      public java.util.Optional<io.sandboxes.EgressProbe> egressProbe() {
        return java.util.Optional.of(server.egressProbe());
      }

      @Override
      public java.util.Optional<java.util.function.BiFunction<String, Integer, String>> previewUrls() {
        return java.util.Optional.of((sandboxId, port) -> server.forward(sandboxId, port).toString());
      }

      @Override
      public boolean awaitWarmPool(java.time.Duration within) {
        return awaitFull(server, within);
      }

      @Override
      public void close() {
        try {
          Runtime.getRuntime().removeShutdownHook(atExit);
        } catch (IllegalStateException shuttingDown) {
          // the hook runs, or has run, close itself
        }
        server.close();
      }
    };
  }

  /**
   * Polls an in-process server's pools until each holds the size it was configured with.
   *
   * @return true once they do, false when {@code within} passes first (or the caller is interrupted)
   */
  static boolean awaitFull(LocalServer server, java.time.Duration within) {
    java.util.Map<String, Integer> wanted = new java.util.HashMap<>();
    server.info().path("warmPool").properties().forEach(e -> wanted.put(e.getKey(), e.getValue().asInt()));
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      java.util.Map<String, Integer> ready = server.warmPoolReady();
      if (wanted.entrySet().stream().allMatch(e -> ready.getOrDefault(e.getKey(), 0) >= e.getValue())) {
        return true;
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  // ---- a server that runs already ----

  /** The server {@code SANDBOXES_LOCAL_URL} names: that one or none, as {@code DOCKER_HOST} is for Docker. */
  private Endpoint named(String url, @org.jspecify.annotations.Nullable String key, LocalSettings settings) {
    if (key == null || key.isBlank()) {
      throw new SandboxException(URL_VARIABLE + " is set (" + url + ") but " + KEY_VARIABLE + " is not: the server's API key is needed");
    }
    URI api;
    try {
      api = io.sandboxes.local.internal.Announcement.loopback(url);
    } catch (IllegalArgumentException e) {
      throw new SandboxException(URL_VARIABLE + ": " + e.getMessage() + "; Sandboxes.local() uses only a server on this machine"
          + " (Sandboxes.at(..) reaches any other)");
    }
    com.fasterxml.jackson.databind.JsonNode info = probe(api, key).orElseThrow(() -> new SandboxException(
        "no sandboxes-local server answered at " + api + " (" + URL_VARIABLE + ") with the key in " + KEY_VARIABLE));
    unsuitable(info, settings).ifPresent(why -> {
      throw new SandboxException("the server " + URL_VARIABLE + " names (" + api + ") cannot be used: " + why);
    });
    return shared(api, info, key, "named by " + URL_VARIABLE, settings);
  }

  /**
   * The server announced in the state root, when it is live and suitable; otherwise nothing,
   * after saying why (or, when {@code strict}, a failure: a server to start in the background
   * could not announce itself beside a live one).
   */
  private java.util.Optional<Endpoint> announced(LocalSettings settings, boolean strict) {
    io.sandboxes.local.internal.Announcement.Read read = io.sandboxes.local.internal.Announcement.read(settings.stateRoot());
    read.ignored().ifPresent(why -> LOG.info("Sandboxes.local(): not reusing a server: {}", why));
    if (read.server().isEmpty()) {
      return java.util.Optional.empty();
    }
    io.sandboxes.local.internal.Announcement.Server s = read.server().get();
    java.util.Optional<com.fasterxml.jackson.databind.JsonNode> info = probe(s);
    if (info.isEmpty()) {
      LOG.info("Sandboxes.local(): not reusing the server announced in {}: it does not answer at {} as pid {}", s.file(), s.apiUrl(),
          s.pid());
      return java.util.Optional.empty();
    }
    java.util.Optional<String> why = unsuitable(info.get(), settings);
    if (why.isPresent()) {
      if (strict) {
        throw new SandboxException("a sandboxes-local server (pid " + s.pid() + ", " + s.apiUrl() + ") is announced in " + s.file()
            + " but cannot be used: " + why.get() + ". Stop it (sandboxes-local stop) to start one in the background, or leave "
            + "background off to start one in this JVM");
      }
      LOG.info("Sandboxes.local(): not reusing the server at {} (pid {}): {}; starting one in this JVM", s.apiUrl(), s.pid(),
          why.get());
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(shared(s.apiUrl(), info.get(), s.apiKey(), "announced in " + s.file(), settings));
  }

  /** Why a live server is not what {@code Sandboxes.local()} promises or was asked for, if it is not. */
  static java.util.Optional<String> unsuitable(com.fasterxml.jackson.databind.JsonNode info, LocalSettings settings) {
    String host = info.path("host").asText("");
    if (!io.sandboxes.local.internal.Announcement.isLoopback(host)) {
      return java.util.Optional.of("it listens on " + host + ", beyond loopback");
    }
    if (info.path("internetByDefault").asBoolean(true)) {
      return java.util.Optional.of("it gives a create that does not say allow_internet_access E2B's open egress "
          + "(--internet-by-default), where Sandboxes.local() promises none");
    }
    String runtime = info.path("runtime").asText("");
    if (settings.runtime() != null && !settings.runtime().equals(runtime)) {
      return java.util.Optional.of("its sandboxes run on " + runtime + ", not on " + settings.runtime() + " as asked");
    }
    return java.util.Optional.empty();
  }

  /** Asks the announced server who it is: empty unless it answers with the key, as the process announced. */
  static java.util.Optional<com.fasterxml.jackson.databind.JsonNode> probe(io.sandboxes.local.internal.Announcement.Server s) {
    return probe(s.apiUrl(), s.apiKey()).filter(info -> info.path("pid").asLong(-1) == s.pid());
  }

  /** {@code GET /local/server} with the key: the server's description, or empty when nothing answers so. */
  static java.util.Optional<com.fasterxml.jackson.databind.JsonNode> probe(URI apiUrl, String apiKey) {
    try (java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(2))
        .version(java.net.http.HttpClient.Version.HTTP_1_1).build()) {
      java.net.http.HttpResponse<byte[]> r = http.send(java.net.http.HttpRequest.newBuilder(apiUrl.resolve("/local/server"))
          .timeout(java.time.Duration.ofSeconds(10)).header("X-API-KEY", apiKey).GET().build(),
          java.net.http.HttpResponse.BodyHandlers.ofByteArray());
      if (r.statusCode() != 200) {
        return java.util.Optional.empty();
      }
      com.fasterxml.jackson.databind.JsonNode info = io.sandboxes.e2b.internal.Json.parse(r.body());
      return info.path("sandboxUrl").isTextual() ? java.util.Optional.of(info) : java.util.Optional.empty();
    } catch (java.io.IOException | RuntimeException e) {
      return java.util.Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while looking for a running sandboxes-local server", e);
    }
  }

  /** A server of its own process: closing the endpoint leaves it, and its sandboxes, running. */
  private static Endpoint shared(URI apiUrl, com.fasterxml.jackson.databind.JsonNode info, String apiKey, String how,
      LocalSettings settings) {
    URI sandboxUrl = io.sandboxes.local.internal.Announcement.loopback(info.path("sandboxUrl").asText());
    LOG.info("Sandboxes.local(): using the sandboxes-local server at {} (pid {}, {}); its sandboxes outlive this JVM", apiUrl,
        info.path("pid").asLong(), how);
    if (!settings.warmPool().isEmpty() && !how.equals("started in the background")) {
      LOG.info("Sandboxes.local(): the server found running keeps its own warm pool ({}); the sizes asked ({}) apply to a server"
          + " Sandboxes.local() starts", info.path("warmPool"), settings.warmPool());
    }
    java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(5))
        .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
    return new Endpoint() {
      @Override
      public URI apiUrl() {
        return apiUrl;
      }

      @Override
      public URI sandboxUrl() {
        return sandboxUrl;
      }

      @Override
      public String apiKey() {
        return apiKey;
      }

      @Override
      public java.util.Optional<java.util.function.BiFunction<String, Integer, String>> previewUrls() {
        return java.util.Optional.of((sandboxId, port) -> forward(http, apiUrl, apiKey, sandboxId, port));
      }

      @Override
      public boolean outlivesProcess() {
        return true;
      }

      @Override
      public void close() {
        http.close();
      }
    };
  }

  /** {@code POST /local/sandboxes/{id}/ports/{port}}: the server's {@link LocalServer#forward}, over HTTP. */
  private static String forward(java.net.http.HttpClient http, URI apiUrl, String apiKey, String sandboxId, int port) {
    String path = "/local/sandboxes/" + java.net.URLEncoder.encode(sandboxId, java.nio.charset.StandardCharsets.UTF_8) + "/ports/" + port;
    try {
      java.net.http.HttpResponse<byte[]> r = http.send(java.net.http.HttpRequest.newBuilder(apiUrl.resolve(path))
          .timeout(java.time.Duration.ofSeconds(30)).header("X-API-KEY", apiKey)
          .POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());
      com.fasterxml.jackson.databind.JsonNode body = io.sandboxes.e2b.internal.Json.parse(r.body());
      if (r.statusCode() == 404) {
        throw new io.sandboxes.SandboxNotFoundException(sandboxId, body.path("message").asText("not found"));
      }
      if (r.statusCode() != 200) {
        throw new SandboxException("forwarding port " + port + " of sandbox " + sandboxId + " failed: HTTP " + r.statusCode() + ": "
            + body.path("message").asText(""));
      }
      return io.sandboxes.e2b.internal.Json.requireText(body, "url");
    } catch (java.io.IOException e) {
      throw new SandboxException("forwarding port " + port + " of sandbox " + sandboxId + " failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while forwarding port " + port + " of sandbox " + sandboxId, e);
    }
  }

  // ---- a server started in the background ----

  /**
   * Starts {@code sandboxes-local serve} as a process of its own (a session of its own where
   * {@code setsid} exists), from this JVM's class path, and waits until it has announced itself.
   * A lock file in the state root keeps two programs from starting one each.
   */
  private Endpoint background(LocalSettings settings) {
    java.nio.file.Path root = settings.stateRoot();
    SPAWNING.lock();
    try {
      createPrivateFolder(root);
      try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(root.resolve("server.lock"),
          java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
          java.nio.channels.FileLock lock = channel.lock()) {
        // another program may have started one while this one waited for the lock
        java.util.Optional<Endpoint> found = announced(settings, true);
        if (found.isPresent()) {
          return found.get();
        }
        return spawn(settings);
      }
    } catch (java.io.IOException e) {
      throw new SandboxException("starting a sandboxes-local server in the background failed: " + e.getMessage(), e);
    } finally {
      SPAWNING.unlock();
    }
  }

  private static void createPrivateFolder(java.nio.file.Path root) throws java.io.IOException {
    if (!java.nio.file.Files.isDirectory(root)) {
      java.nio.file.Files.createDirectories(root);
      if (java.nio.file.Files.getFileAttributeView(root, java.nio.file.attribute.PosixFileAttributeView.class) != null) {
        java.nio.file.Files.setPosixFilePermissions(root, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
      }
    }
  }

  private Endpoint spawn(LocalSettings settings) throws java.io.IOException {
    java.nio.file.Path root = settings.stateRoot();
    java.util.List<String> command = new java.util.ArrayList<>();
    setsid().ifPresent(command::add);
    command.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(java.util.List.of("-Xmx512m", "-XX:+UseSerialGC", "-cp", classPath(), Main.class.getName(), "serve",
        "--port", "0", "--envd-port", "0", "--id", BACKGROUND_ID, "--background", "--idle-exit", BACKGROUND_IDLE_EXIT.toMinutes() + "m"));
    if (settings.runtime() != null) {
      command.addAll(java.util.List.of("--runtime", settings.runtime()));
    }
    settings.warmPool().forEach((template, size) -> command.addAll(java.util.List.of("--warm-pool", template + "=" + size)));
    if (settings.warmPoolMax() != null) {
      command.addAll(java.util.List.of("--warm-pool-max", settings.warmPoolMax().toString()));
    }
    java.nio.file.Path log = root.resolve("background.log");
    java.nio.file.Files.deleteIfExists(log);
    java.nio.file.Files.createFile(log, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().put("SANDBOXES_STATE_DIR", root.toString());
    pb.environment().remove(URL_VARIABLE);
    pb.environment().remove(KEY_VARIABLE);
    Process process = pb.start();
    LOG.info("Sandboxes.local(): started a sandboxes-local server in the background (pid {}, log {})", process.pid(), log);
    long deadline = System.nanoTime() + BACKGROUND_START.toNanos();
    long shown = 0;
    try {
      while (true) {
        shown = relay(log, shown);
        io.sandboxes.local.internal.Announcement.Read read = io.sandboxes.local.internal.Announcement.read(root);
        if (read.server().isPresent() && read.server().get().pid() == process.pid()) {
          java.util.Optional<com.fasterxml.jackson.databind.JsonNode> info = probe(read.server().get());
          if (info.isPresent()) {
            return shared(read.server().get().apiUrl(), info.get(), read.server().get().apiKey(), "started in the background",
                settings);
          }
        }
        if (!process.isAlive()) {
          relay(log, shown);
          throw new SandboxException("the sandboxes-local server started in the background (pid " + process.pid() + ") exited with "
              + process.exitValue() + " before it served; its output is in " + log + ": " + tail(log));
        }
        if (System.nanoTime() - deadline > 0) {
          process.destroy();
          throw new SandboxException("the sandboxes-local server started in the background (pid " + process.pid()
              + ") did not announce itself within " + BACKGROUND_START.toMinutes() + " min; stopped it. Its output is in " + log);
        }
        Thread.sleep(100);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroy();
      throw new SandboxException("interrupted while a sandboxes-local server started in the background", e);
    }
  }

  /** Copies the lines the background server wrote since {@code from} to stderr, as the in-process server shows its progress. */
  private static long relay(java.nio.file.Path log, long from) {
    try (java.nio.channels.SeekableByteChannel ch = java.nio.file.Files.newByteChannel(log)) {
      if (ch.size() <= from) {
        return from;
      }
      ch.position(from);
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate((int) Math.min(ch.size() - from, 1 << 20));
      ch.read(buf);
      String text = new String(buf.array(), 0, buf.position(), java.nio.charset.StandardCharsets.UTF_8);
      int end = text.lastIndexOf('\n');
      if (end < 0) {
        return from;
      }
      for (String line : text.substring(0, end).split("\n")) {
        System.err.println("[sandboxes-local] " + line);
      }
      return from + text.substring(0, end + 1).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    } catch (java.io.IOException e) {
      return from;
    }
  }

  private static String tail(java.nio.file.Path log) {
    try {
      java.util.List<String> lines = java.nio.file.Files.readAllLines(log);
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (java.io.IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  private static java.util.Optional<String> setsid() {
    for (String dir : new String[] {"/usr/bin", "/bin", "/usr/local/bin"}) {
      java.nio.file.Path p = java.nio.file.Path.of(dir, "setsid");
      if (java.nio.file.Files.isExecutable(p)) {
        return java.util.Optional.of(p.toString());
      }
    }
    return java.util.Optional.empty();
  }

  /**
   * The class path the background server runs on: the jars (or folders) this runtime, core and
   * SLF4J were loaded from, then this JVM's own class path (for what the runtime needs when it
   * is not one shaded jar, e.g. in an IDE).
   */
  static String classPath() {
    java.util.LinkedHashSet<String> entries = new java.util.LinkedHashSet<>();
    for (Class<?> c : new Class<?>[] {LocalServer.class, io.sandboxes.e2b.E2BSandboxProvider.class, org.slf4j.LoggerFactory.class}) {
      java.security.CodeSource source = c.getProtectionDomain().getCodeSource();
      URI location;
      try {
        location = source == null ? null : source.getLocation().toURI();
      } catch (java.net.URISyntaxException e) {
        location = null;
      }
      if (location == null || !"file".equals(location.getScheme())) {
        throw new SandboxException("a sandboxes-local server cannot be started in the background from this class path: "
            + c.getName() + " was not loaded from a jar or folder (" + (source == null ? "no code source" : source.getLocation())
            + "); run sandboxes-local serve instead, which Sandboxes.local() then finds");
      }
      entries.add(java.nio.file.Path.of(location).toString());
    }
    for (String e : System.getProperty("java.class.path", "").split(java.io.File.pathSeparator)) {
      if (!e.isBlank()) {
        entries.add(e);
      }
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  private static final String SLF4J_VERBOSITY = "slf4j.internal.verbosity";

  /**
   * Keeps SLF4J from printing its three-line "No SLF4J providers were found" warning when the
   * program chose no logging backend: a program that uses {@code Sandboxes.local()} and logs
   * nothing should print nothing, and the warning is about our dependency, not the program.
   *
   * <p>SLF4J reads {@code slf4j.internal.verbosity} once, when it first reports, which is when it
   * first initializes. So this runs as this class initializes, before anything of ours touches
   * SLF4J (this class's own logger and the server's classes do), raises the threshold to ERROR only when the user has set neither that
   * property nor {@code slf4j.provider} and there is positively no provider (no SLF4J 2 service
   * provider, no SLF4J 1 binding, whose warning is worth seeing), makes SLF4J initialize there
   * and then, and takes the property away again. A program that has a provider, or whose SLF4J
   * has already initialized, is left exactly as it was.
   */
  private static org.slf4j.Logger quietSlf4jWithoutProvider() {
    quietenSlf4j();
    return org.slf4j.LoggerFactory.getLogger(LocalRuntimeService.class);
  }

  private static void quietenSlf4j() {
    if (System.getProperty(SLF4J_VERBOSITY) != null || System.getProperty("slf4j.provider") != null) {
      return;
    }
    ClassLoader loader = org.slf4j.LoggerFactory.class.getClassLoader();
    if (loader.getResource("org/slf4j/impl/StaticLoggerBinder.class") != null) {
      return;
    }
    Class<?> provider;
    try {
      // by name: a project may resolve SLF4J 1.7 (Testcontainers 1.x brings it), which has no such type
      provider = Class.forName("org.slf4j.spi.SLF4JServiceProvider", false, loader);
    } catch (ClassNotFoundException slf4j1) {
      return; // SLF4J 1.7 (no verbosity setting to raise): it warns as it does for the rest of the project
    }
    try {
      if (java.util.ServiceLoader.load(provider, loader).stream().findAny().isPresent()) {
        return;
      }
    } catch (java.util.ServiceConfigurationError e) {
      return; // a broken provider: SLF4J's own report about it is worth seeing
    }
    System.setProperty(SLF4J_VERBOSITY, "ERROR");
    try {
      org.slf4j.LoggerFactory.getILoggerFactory();
    } finally {
      System.clearProperty(SLF4J_VERBOSITY);
    }
  }
}
