package io.sandboxes.local.internal.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.SandboxException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Finds a Docker engine that answers, quickly, and says exactly where it looked when none does.
 *
 * <p>Candidates, in order: {@code DOCKER_HOST} (when set, the only one, as for the docker CLI);
 * {@code docker.host} in {@code ~/.testcontainers.properties}; the docker CLI's current context
 * ({@code DOCKER_CONTEXT}, else {@code currentContext} in the CLI's {@code config.json});
 * then the usual sockets of Docker Engine, rootless Docker and Docker Desktop. Each is asked
 * {@code GET /_ping} on a raw connection, with a per-candidate timeout inside one overall budget,
 * so a socket that accepts and never answers costs at most {@link #PROBE_TIMEOUT} and the probes
 * together at most {@link #BUDGET}, counted from the first probe. Nothing is cached: every call looks again, so starting Docker
 * and trying again works.
 *
 * <p>The local runtime speaks to Docker over a unix socket or plain {@code tcp://}; TLS and
 * {@code ssh://} endpoints are refused with a message saying so.
 */
public final class DockerLocator {
  /** How long one candidate may take to answer. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
  /** How long the probes may take together, from the first one. */
  static final Duration BUDGET = Duration.ofSeconds(3);
  /** The newest API version the docker-java bundled with Testcontainers is used at (as Testcontainers does). */
  static final String NEWEST_API_VERSION = "1.44";
  /** Used when a daemon does not say which API version it speaks (only very old ones). */
  static final String FALLBACK_API_VERSION = "1.32";

  private static final String WHAT_TO_DO = "Start Docker (e.g. `sudo systemctl start docker`, or `sudo dockerd &`), "
      + "or set DOCKER_HOST to where it listens (e.g. unix:///path/to/docker.sock or tcp://127.0.0.1:2375)";

  private static final String FROM_DOCKER_HOST = "DOCKER_HOST";

  private DockerLocator() {}

  /**
   * Where the lookup reads from: the environment, the home folder Java reports (where
   * Testcontainers keeps its properties) and the home folder the docker CLI uses ({@code $HOME}).
   *
   * @param getenv environment variables, by name; null for unset
   * @param userHome Java's {@code user.home}
   * @param home the docker CLI's home ({@code $HOME}, else {@code user.home})
   * @param uid this process's user id, when it can be read
   */
  public record Environment(Function<String, @Nullable String> getenv, Path userHome, Path home, OptionalInt uid) {
    /** @return this process's environment */
    public static Environment system() {
      Path userHome = Path.of(System.getProperty("user.home"));
      String env = System.getenv("HOME");
      Path home = env == null || env.isBlank() ? userHome : Path.of(env);
      return new Environment(System::getenv, userHome, home, currentUid());
    }

    /** @return the variable's value, or null when it is unset or blank */
    @Nullable String get(String name) {
      String v = getenv.apply(name);
      return v == null || v.isBlank() ? null : v.strip();
    }

    /** The uid without JNA: Linux reports it as the owner of {@code /proc/self}. */
    private static OptionalInt currentUid() {
      try {
        return OptionalInt.of((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
      } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
        return OptionalInt.empty();
      }
    }
  }

  /**
   * A place to look.
   *
   * @param host where the engine would be, e.g. {@code unix:///var/run/docker.sock}; null when
   *     the source itself could not be read
   * @param source where this candidate came from, e.g. {@code DOCKER_HOST}
   * @param problem why it cannot even be tried, when it cannot
   */
  record Candidate(@Nullable URI host, String source, @Nullable String problem) {
    static Candidate of(URI host, String source) {
      return new Candidate(host, source, null);
    }

    static Candidate broken(String source, String problem) {
      return new Candidate(null, source, problem);
    }

    String label() {
      if (source.equals(FROM_DOCKER_HOST)) {
        return host == null ? source : source + "=" + host;
      }
      return host == null ? source : host + " (" + source + ")";
    }
  }

  /**
   * An engine that answered.
   *
   * @param host its address, unix or plain tcp
   * @param apiVersion the Docker API version to speak to it, e.g. {@code 1.41}
   * @param source where it was found
   */
  public record Found(URI host, String apiVersion, String source) {}

  /**
   * Looks for an engine.
   *
   * @return the first candidate that answered
   * @throws SandboxException naming every place tried and why each failed, and what to do
   */
  public static Found locate(Environment env) {
    Outcome o = look(env);
    if (o.found != null) {
      return o.found;
    }
    throw new SandboxException("the local runtime needs a Docker engine, and none answered. " + o.explanation());
  }

  /**
   * Looks for an engine without failing.
   *
   * @return why none can be used, or empty when one answered
   */
  public static Optional<String> unavailableReason(Environment env) {
    Outcome o = look(env);
    return o.found != null ? Optional.empty() : Optional.of("no Docker engine is reachable. " + o.explanation());
  }

  private record Outcome(@Nullable Found found, Map<String, String> failures) {
    String explanation() {
      StringBuilder b = new StringBuilder("Tried ");
      int i = 0;
      for (Map.Entry<String, String> e : failures.entrySet()) {
        b.append(i++ == 0 ? "" : "; ").append(e.getKey()).append(": ").append(e.getValue());
      }
      return b.append(". ").append(WHAT_TO_DO).append('.').toString();
    }
  }

  private static Outcome look(Environment env) {
    // the budget is for probing: it starts at the first probe, so that a slow start of the JVM
    // (loading classes, reading the environment) never spends it before any engine was asked
    long deadline = 0;
    Map<String, String> failures = new LinkedHashMap<>();
    for (Candidate c : candidates(env)) {
      URI host = c.host();
      if (host == null) {
        failures.put(c.label(), String.valueOf(c.problem()));
        continue;
      }
      String refused = c.problem() != null ? c.problem() : unsupported(host, env);
      if (refused != null) {
        failures.put(c.label(), refused);
        continue;
      }
      if (deadline == 0) {
        deadline = System.nanoTime() + BUDGET.toNanos();
      }
      try {
        String apiVersion = ping(host, deadline);
        return new Outcome(new Found(host, apiVersion, c.source()), failures);
      } catch (ProbeFailed e) {
        failures.put(c.label(), e.getMessage());
      }
    }
    return new Outcome(null, failures);
  }

  /** @return why the runtime cannot use this address even if an engine is there, or null */
  private static @Nullable String unsupported(URI host, Environment env) {
    String scheme = String.valueOf(host.getScheme()).toLowerCase(Locale.ROOT);
    return switch (scheme) {
      case "unix" -> null;
      case "tcp", "http" -> env.get("DOCKER_TLS_VERIFY") != null
          ? "DOCKER_TLS_VERIFY is set, and the local runtime cannot speak TLS to Docker; use a unix socket or a plain tcp:// address"
          : null;
      case "https" -> "the local runtime cannot speak TLS to Docker; use a unix socket or a plain tcp:// address";
      case "ssh" -> "the local runtime cannot reach Docker over ssh://; use a unix socket or a plain tcp:// address";
      case "npipe" -> "the local runtime does not support Windows named pipes";
      default -> "not an address the local runtime understands (unix:// or tcp://)";
    };
  }

  /** @return every place to look, in order, each once */
  static List<Candidate> candidates(Environment env) {
    List<Candidate> all = new ArrayList<>();
    String dockerHost = env.get("DOCKER_HOST");
    if (dockerHost != null) {
      all.add(parse(dockerHost, FROM_DOCKER_HOST));
      return all;
    }
    testcontainersProperty(env).ifPresent(all::add);
    dockerContext(env).ifPresent(all::add);
    all.add(Candidate.of(URI.create("unix:///var/run/docker.sock"), "the default socket"));
    String xdg = env.get("XDG_RUNTIME_DIR");
    if (xdg != null) {
      all.add(socket(Path.of(xdg, "docker.sock"), "rootless Docker, in $XDG_RUNTIME_DIR"));
    }
    all.add(socket(env.home().resolve(".docker/run/docker.sock"), "Docker Desktop"));
    all.add(socket(env.home().resolve(".docker/desktop/docker.sock"), "Docker Desktop"));
    env.uid().ifPresent(uid -> all.add(socket(Path.of("/run/user/" + uid + "/docker.sock"), "rootless Docker")));
    List<Candidate> distinct = new ArrayList<>();
    for (Candidate c : all) {
      if (c.host() == null || distinct.stream().noneMatch(d -> c.host().equals(d.host()))) {
        distinct.add(c);
      }
    }
    return distinct;
  }

  private static Candidate socket(Path path, String source) {
    return Candidate.of(unixUri(path), source);
  }

  /** {@code unix:///the/path}, with whatever a URI cannot hold (a space, say) escaped. */
  private static URI unixUri(Path path) {
    return URI.create("unix://" + path.toAbsolutePath().toUri().getRawPath());
  }

  /** Reads an address as the docker CLI does: {@code tcp://host} means port 2375. */
  private static Candidate parse(String address, String source) {
    try {
      return parseOrThrow(address, source);
    } catch (IllegalArgumentException e) { // includes a path the file system cannot hold
      return broken(source, address, "not a valid address (" + e.getMessage() + ")");
    }
  }

  private static Candidate parseOrThrow(String address, String source) {
    if (address.regionMatches(true, 0, "unix://", 0, "unix://".length())) {
      String path = address.substring("unix://".length());
      if (path.isEmpty()) {
        return broken(source, address, "names no socket");
      }
      return Candidate.of(unixUri(Path.of(path)), source);
    }
    URI uri;
    try {
      uri = URI.create(address);
    } catch (IllegalArgumentException e) {
      return broken(source, address, "not a valid address (" + e.getMessage() + ")");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    switch (scheme) {
      case "tcp", "http" -> {
        if (uri.getHost() == null) {
          return broken(source, address, "names no host");
        }
        int port = uri.getPort() < 0 ? 2375 : uri.getPort();
        return Candidate.of(URI.create("tcp://" + hostForUri(uri.getHost()) + ":" + port), source);
      }
      default -> {
        return Candidate.of(uri, source);
      }
    }
  }

  private static Candidate broken(String source, String address, String problem) {
    return Candidate.broken(source.equals(FROM_DOCKER_HOST) ? source + "=" + address : address + " (" + source + ")", problem);
  }

  private static String hostForUri(String host) {
    return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  /** {@code docker.host} in Testcontainers' own configuration file, where Testcontainers users set it. */
  private static Optional<Candidate> testcontainersProperty(Environment env) {
    Path file = env.userHome().resolve(".testcontainers.properties");
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    String source = "docker.host in " + file;
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    } catch (IOException | IllegalArgumentException e) {
      return Optional.of(Candidate.broken(source, "unreadable: " + e.getMessage()));
    }
    String host = p.getProperty("docker.host");
    return host == null || host.isBlank() ? Optional.empty() : Optional.of(parse(host.strip(), source));
  }

  /** The docker CLI's current context, resolved the way the CLI resolves it. */
  private static Optional<Candidate> dockerContext(Environment env) {
    String configDirVar = env.get("DOCKER_CONFIG");
    Path configDir = configDirVar != null ? Path.of(configDirVar) : env.home().resolve(".docker");
    String name = env.get("DOCKER_CONTEXT");
    String named = "DOCKER_CONTEXT";
    ObjectMapper json = new ObjectMapper();
    if (name == null) {
      Path config = configDir.resolve("config.json");
      if (!Files.isRegularFile(config)) {
        return Optional.empty();
      }
      try {
        JsonNode current = json.readTree(config.toFile()).path("currentContext");
        name = current.isTextual() && !current.asText().isBlank() ? current.asText() : null;
      } catch (IOException e) {
        return Optional.of(Candidate.broken("the docker CLI's current context", config + " is unreadable: " + e.getMessage()));
      }
      named = "currentContext in " + config;
    }
    if (name == null || name.equals("default")) {
      return Optional.empty();
    }
    String source = "docker context '" + name + "' (" + named + ")";
    String id = sha256(name);
    Path meta = configDir.resolve("contexts").resolve("meta").resolve(id).resolve("meta.json");
    if (!Files.isRegularFile(meta)) {
      return Optional.of(Candidate.broken(source, "no such context (" + meta + " does not exist)"));
    }
    String host;
    try {
      JsonNode h = json.readTree(meta.toFile()).path("Endpoints").path("docker").path("Host");
      host = h.isTextual() && !h.asText().isBlank() ? h.asText() : null;
    } catch (IOException e) {
      return Optional.of(Candidate.broken(source, meta + " is unreadable: " + e.getMessage()));
    }
    if (host == null) {
      return Optional.of(Candidate.broken(source, meta + " names no Endpoints.docker.Host"));
    }
    Candidate c = parse(host, source);
    if (c.host() != null && Files.isDirectory(configDir.resolve("contexts").resolve("tls").resolve(id).resolve("docker"))
        && !"unix".equalsIgnoreCase(c.host().getScheme())) {
      return Optional.of(new Candidate(c.host(), source,
          "the context uses TLS, and the local runtime cannot speak TLS to Docker; use a unix socket or a plain tcp:// address"));
    }
    return Optional.of(c);
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A candidate that did not answer as Docker does; the message says how. */
  static final class ProbeFailed extends Exception {
    private static final long serialVersionUID = 1L;

    ProbeFailed(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Sends {@code GET /_ping} and reads the answer, within {@link #PROBE_TIMEOUT} and the overall
   * deadline.
   *
   * @return the API version to use with this engine
   * @throws ProbeFailed saying why this is not an engine that answers
   */
  static String ping(URI host, long deadline) throws ProbeFailed {
    SocketAddress address;
    StandardProtocolFamily family;
    if ("unix".equalsIgnoreCase(host.getScheme())) {
      Path path = Path.of(host.getPath());
      if (!Files.exists(path)) {
        throw new ProbeFailed("no such socket");
      }
      if (!isSocket(path)) {
        throw new ProbeFailed("exists but is not a socket");
      }
      address = UnixDomainSocketAddress.of(path);
      family = StandardProtocolFamily.UNIX;
    } else {
      InetSocketAddress inet = new InetSocketAddress(host.getHost().replaceAll("^\\[|]$", ""), host.getPort());
      if (inet.isUnresolved()) {
        throw new ProbeFailed("unknown host " + host.getHost());
      }
      address = inet;
      family = inet.getAddress() instanceof java.net.Inet6Address ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
    }
    long now = System.nanoTime();
    if (deadline - now <= 0) {
      throw new ProbeFailed("not tried: the " + BUDGET.toSeconds() + " s for finding Docker were spent on the ones before");
    }
    long budget = Math.min(PROBE_TIMEOUT.toNanos(), deadline - now);
    long probeDeadline = now + budget;
    String waited = seconds(budget);
    try (SocketChannel ch = SocketChannel.open(family); Selector selector = Selector.open()) {
      ch.configureBlocking(false);
      if (!ch.connect(address)) {
        SelectionKey key = ch.register(selector, SelectionKey.OP_CONNECT);
        while (!ch.finishConnect()) {
          if (!await(selector, probeDeadline)) {
            throw new ProbeFailed("no connection within " + waited);
          }
        }
        key.cancel();
        selector.selectNow();
      }
      ByteBuffer request = ByteBuffer.wrap("GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      SelectionKey key = ch.register(selector, SelectionKey.OP_WRITE);
      while (request.hasRemaining()) {
        ch.write(request);
        if (request.hasRemaining() && !await(selector, probeDeadline)) {
          throw new ProbeFailed("no answer within " + waited + " (it accepted the connection but did not read)");
        }
      }
      key.interestOps(SelectionKey.OP_READ);
      ByteBuffer buf = ByteBuffer.allocate(8192);
      while (true) {
        int n = ch.read(buf);
        String sofar = new String(buf.array(), 0, buf.position(), StandardCharsets.ISO_8859_1);
        int end = sofar.indexOf("\r\n\r\n");
        if (end >= 0) {
          return answer(sofar.substring(0, end));
        }
        if (n < 0) {
          throw new ProbeFailed(buf.position() == 0 ? "closed the connection without answering"
              : "answered something that is not HTTP: " + firstLine(sofar));
        }
        if (!buf.hasRemaining()) {
          throw new ProbeFailed("answered something that is not Docker: " + firstLine(sofar));
        }
        if (n == 0 && !await(selector, probeDeadline)) {
          throw new ProbeFailed("no answer within " + waited);
        }
      }
    } catch (ProbeFailed e) {
      throw e;
    } catch (ConnectException e) {
      throw new ProbeFailed("connection refused" + ("unix".equalsIgnoreCase(host.getScheme()) ? " (nothing listens on it)" : ""));
    } catch (NoRouteToHostException | UnknownHostException e) {
      throw new ProbeFailed("unreachable: " + e.getMessage());
    } catch (IOException e) {
      String m = String.valueOf(e.getMessage());
      if (m.contains("Permission denied")) {
        throw new ProbeFailed("permission denied (add your user to the docker group: `sudo usermod -aG docker $USER`, then log in again)");
      }
      if (m.contains("Connection refused")) {
        throw new ProbeFailed("connection refused");
      }
      throw new ProbeFailed(e.getClass().getSimpleName() + ": " + m);
    }
  }

  /** @return the API version, from an answer's status line and headers */
  private static String answer(String head) throws ProbeFailed {
    String[] lines = head.split("\r\n");
    if (!lines[0].startsWith("HTTP/1.")) {
      throw new ProbeFailed("answered something that is not HTTP: " + firstLine(lines[0]));
    }
    if (!lines[0].matches("HTTP/1\\.\\d 200( .*)?")) {
      throw new ProbeFailed("answered '" + lines[0] + "', which is not how Docker answers GET /_ping");
    }
    String version = null;
    boolean docker = false;
    for (String line : lines) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
        String value = line.substring(colon + 1).strip();
        if (name.equals("api-version")) {
          version = value;
        }
        docker |= name.equals("api-version") || name.equals("docker-experimental") || name.equals("ostype")
            || (name.equals("server") && value.startsWith("Docker/"));
      }
    }
    if (!docker) {
      throw new ProbeFailed("answered HTTP 200 without any of Docker's headers, so it is not a Docker engine");
    }
    return apiVersionFor(version);
  }

  /** The daemon's newest API version, capped at the newest the bundled client is used at. */
  static String apiVersionFor(@Nullable String daemonVersion) {
    if (daemonVersion == null || !daemonVersion.matches("\\d+\\.\\d+")) {
      return FALLBACK_API_VERSION;
    }
    return compare(daemonVersion, NEWEST_API_VERSION) > 0 ? NEWEST_API_VERSION : daemonVersion;
  }

  private static int compare(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    int major = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
    return major != 0 ? major : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
  }

  private static boolean await(Selector selector, long deadline) throws IOException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      return false;
    }
    selector.select(Math.max(1, left / 1_000_000));
    selector.selectedKeys().clear();
    return true;
  }

  private static boolean isSocket(Path path) {
    try {
      int mode = (Integer) Files.getAttribute(path, "unix:mode");
      return (mode & 0170000) == 0140000;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
      return true; // cannot tell here; connecting will
    }
  }

  private static String firstLine(String s) {
    String line = s.lines().findFirst().orElse("").strip();
    return line.length() > 60 ? line.substring(0, 60) + "..." : line;
  }

  private static String seconds(long nanos) {
    double s = nanos / 1e9;
    return s >= 1 && Math.abs(s - Math.rint(s)) < 0.05 ? Math.round(s) + " s" : String.format(Locale.ROOT, "%.1f s", s);
  }
}
