package io.sandboxes.local;

import io.sandboxes.local.internal.docker.DockerBuildRuntime;
import io.sandboxes.local.internal.docker.DockerNetworkAttachments;
import io.sandboxes.local.internal.docker.firewall.DockerEgressEnforcement;
import io.sandboxes.local.internal.docker.DockerSandboxEngine;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import io.sandboxes.EgressProbe;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.PortForwards;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Templates;
import io.sandboxes.local.internal.Volumes;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.docker.SandboxRuntime;
import io.sandboxes.local.internal.egress.SandboxNetwork;
import io.sandboxes.local.internal.http.ApiHandler;
import io.sandboxes.local.internal.http.EnvdHandler;
import io.sandboxes.local.internal.http.StallGuard;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a started {@link LocalServer} is made of, put together in the order each part needs the
 * ones before it: the engine's runtime, the base image, the sandbox network, the sandboxes and
 * their templates, the template builds, and the HTTP server in front of them; taken apart in the
 * reverse order. The HTTP handlers are given the parts; no part below them knows of HTTP.
 */
final class ServerParts {
  /** The server's own logger, so its lines read as they always have. */
  private static final Logger LOG = LoggerFactory.getLogger(LocalServer.class);
  /**
   * How long a connection may be silent once its request has been read whole and is being
   * answered: longer than any keepalive interval of a process or watch stream.
   */
  static final Duration ANSWER_IDLE_TIMEOUT = Duration.ofMinutes(5);

  final DockerRuntime docker;
  final SandboxRuntime runtime;
  final @Nullable SandboxNetwork network;
  final Registry registry;
  final TemplateBuilds builds;
  private final io.sandboxes.local.internal.VolumeWorkers volumeWorkers;
  /** Ends the secrets when no later server can take them back (a fresh id, no state folder given); else nothing. */
  private final Runnable secretsAtClose;
  private final Server jetty;
  private final ServerConnector api;
  private final ServerConnector envd;
  /** Where the control plane and envd listen, once {@link #serve} has opened the ports. */
  volatile @Nullable URI apiUrl;
  volatile @Nullable URI sandboxUrl;

  private ServerParts(DockerRuntime docker, SandboxRuntime runtime, @Nullable SandboxNetwork network, Registry registry,
      TemplateBuilds builds, io.sandboxes.local.internal.VolumeWorkers volumeWorkers, Runnable secretsAtClose, Server jetty,
      ServerConnector api, ServerConnector envd) {
    this.volumeWorkers = volumeWorkers;
    this.secretsAtClose = secretsAtClose;
    this.docker = docker;
    this.runtime = runtime;
    this.network = network;
    this.registry = registry;
    this.builds = builds;
    this.jetty = jetty;
    this.api = api;
    this.envd = envd;
  }

  /**
   * Puts a server's parts together on a connected engine, all but listening: {@link #serve()}
   * opens the ports once the server holds its parts.
   */
  static ServerParts assemble(LocalServer server, LocalServer.Builder config) {
    // throws, within a few seconds, a SandboxException naming every place tried when no engine answers
    DockerRuntime docker = DockerRuntime.connect(config.runtime);
    try {
      return assemble(server, config, docker);
    } catch (RuntimeException | Error e) {
      docker.close();
      throw e;
    }
  }

  private static ServerParts assemble(LocalServer server, LocalServer.Builder config, DockerRuntime docker) {
    // before anything is made: a runtime Docker does not know, or cannot run sandboxes on, is refused here
    SandboxRuntime runtime = SandboxRuntime.check(docker);
    if (runtime.gvisor()) {
      StructuredLog.atInfo(LOG).addKeyValue("event", "server.runtime").addKeyValue("runtime", runtime.describe())
          .log("sandboxes run under gVisor: raw sockets are refused; sudo cannot raise privileges (gVisor sets no_new_privs), so"
              + " root comes from a command's user; coreutils' stat and ls -l, Ctrl-C in a PTY and file metadata do not work with"
              + " runsc 2022-12-19 (README, \"Choosing gVisor\")");
    }
    Path stateDir = config.stateDir != null ? config.stateDir : defaultStateRoot().resolve(config.serverId);
    // puts the daemon binary in the state folder, where containers mount it from; made first, so
    // what it reads of the engine comes in beside the rest of the start-up
    SandboxEngine engine = new DockerSandboxEngine(docker, stateDir);
    String baseImage = BaseImage.ensure(docker, config.progress);
    io.sandboxes.local.internal.secrets.SecretStore secrets = openSecrets(stateDir.resolve("secrets"));
    Optional<SandboxNetwork> network = SandboxNetwork.start(new DockerNetworkAttachments(docker), new DockerEgressEnforcement(),
        config.openEgress, config.allowedWitness, config.upstreamProxy);
    network.ifPresent(n -> {
      config.egressNamesForTesting.forEach(n::answerForTesting);
      n.interceptWith(new io.sandboxes.local.internal.egress.RuleInterception(
          io.sandboxes.local.internal.egress.GatewayCa.create("Sandboxes egress gateway CA (" + config.serverId + ")"),
          extraCas(config.extraCaCerts), secrets::valueOf));
    });
    Registry reg = new Registry(engine, new Templates(engine, baseImage), config.serverId, stateDir, network, config.diskSizeMB,
        config.warmPool, config.warmPoolMax);
    Volumes volumes = new Volumes(engine);
    // the volume content API's helpers: an instance per volume read or written without a sandbox
    io.sandboxes.local.internal.VolumeWorkers workers = new io.sandboxes.local.internal.VolumeWorkers(engine, baseImage, config.serverId);
    io.sandboxes.local.internal.VolumeContent content = new io.sandboxes.local.internal.VolumeContent(workers);
    volumes.beforeRemoval(content::release);

    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setName("sandboxes-local");
    threads.setVirtualThreadsExecutor(Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-local-", 0).factory()));
    Server jetty = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendDateHeader(true);
    ServerConnector api = connector(jetty, http, config, config.apiPort);
    ServerConnector envd = connector(jetty, http, config, config.envdPort);
    removeLegacySpool(Path.of(System.getProperty("java.io.tmpdir"), "sandboxes-uploads-" + config.serverId));
    ApiHandler apiHandler = new ApiHandler(reg, volumes, config.apiKey, server::egressProbe, server::forward, config.internetByDefault);
    EnvdHandler envdHandler = new EnvdHandler(reg);
    TemplateBuilds builds = new TemplateBuilds(new DockerBuildRuntime(docker, buildNetwork(network)), reg.templates(),
        stateDir.resolve("template-files"), config.serverId, baseImage,
        config.templateBuildBudgetMB > 0 ? config.templateBuildBudgetMB : config.diskSizeMB);
    reg.templates().alsoResolve(builds::resolve);
    reg.templates().alsoIdentify(ref -> builds.find(ref).map(b -> b.templateId()).orElse(null));
    reg.templates().alsoReserve(n -> builds.findTemplate(n).isPresent());
    reg.templates().alsoAfterRemoval(builds::sandboxRemoved);
    reg.reportTemplateIds(); // sandboxes taken back at start: their built template's id, now it can be looked up
    builds.sweepAtStart();
    apiHandler.templateBuilds(builds, server::startedApiUrl);
    envdHandler.templateDefaults(builds::defaults);
    apiHandler.serverInfo(server::info);
    apiHandler.secrets(secrets);
    apiHandler.volumeContent(content);
    jetty.setHandler(new StallGuard(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        server.activity.arrived();
        Callback ending = Callback.from(callback, server.activity::ended);
        boolean handled = false;
        try {
          handled = request.getConnectionMetaData().getConnector() == envd ? envdHandler.handle(request, response, ending)
              : apiHandler.handle(request, response, ending);
          return handled;
        } finally {
          if (!handled) {
            server.activity.ended(); // thrown, or not ours: Jetty answers it with its own callback
          }
        }
      }
    }, config.requestIdleTimeout, ANSWER_IDLE_TIMEOUT, config.keepAliveTimeout));
    jetty.setStopTimeout(Duration.ofSeconds(2).toMillis());
    Runnable secretsAtClose = config.serverIdGiven || config.stateDir != null ? () -> { } : secrets::discard;
    return new ServerParts(docker, runtime, network.orElse(null), reg, builds, workers, secretsAtClose, jetty, api, envd);
  }

  /** The extra CAs: the configured PEM file's, else $SANDBOXES_EXTRA_CA_CERTS's, else none; an unreadable file stops the start. */
  private static java.util.List<java.security.cert.X509Certificate> extraCas(@Nullable Path configured) {
    String env = System.getenv("SANDBOXES_EXTRA_CA_CERTS");
    Path file = configured != null ? configured : env == null || env.isBlank() ? null : Path.of(env);
    if (file == null) {
      return java.util.List.of();
    }
    try (java.io.InputStream in = java.nio.file.Files.newInputStream(file)) {
      java.util.List<java.security.cert.X509Certificate> out = new java.util.ArrayList<>();
      for (var c : java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        out.add((java.security.cert.X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new java.security.cert.CertificateException("no certificate in it");
      }
      return out;
    } catch (java.io.IOException | java.security.cert.CertificateException e) {
      throw new SandboxException("the extra CA certificates " + file + " could not be read: " + e.getMessage(), e);
    }
  }

  private static io.sandboxes.local.internal.secrets.SecretStore openSecrets(Path folder) {
    try {
      return io.sandboxes.local.internal.secrets.SecretStore.open(folder);
    } catch (java.io.IOException e) {
      throw new SandboxException("the secrets folder " + folder + " could not be opened: " + e.getMessage(), e);
    }
  }

  /** Opens the ports; when that fails, the builds and every sandbox made so far are ended. */
  void serve(LocalServer.Builder config) {
    try {
      jetty.start();
    } catch (Exception e) {
      builds.close();
      volumeWorkers.close();
      secretsAtClose.run();
      registry.close(true);
      docker.close();
      throw new SandboxException("the local server could not start: " + e.getMessage(), e);
    }
    this.apiUrl = URI.create("http://" + config.host + ":" + api.getLocalPort());
    this.sandboxUrl = URI.create("http://" + config.host + ":" + envd.getLocalPort());
    StructuredLog.atInfo(LOG).addKeyValue("event", "server.started").addKeyValue("server", config.serverId).addKeyValue("apiUrl", apiUrl)
        .addKeyValue("sandboxUrl", sandboxUrl).addKeyValue("volumeApiUrl", apiUrl).addKeyValue("runtime", runtime.describe())
        .log("sandboxes-local serving");
  }

  /** Stops serving, then ends the builds, the sandboxes (unless kept), the network and the engine's client, in that order. */
  void close(boolean killSandboxes) {
    try {
      jetty.stop();
    } catch (Exception e) {
      LOG.warn("stopping the HTTP server failed: {}", e.toString());
    }
    builds.close();
    volumeWorkers.close();
    secretsAtClose.run();
    registry.close(killSandboxes);
    if (network != null) {
      network.close();
    }
    docker.close();
  }

  /** What {@link LocalServer#info()} answers, from the parts and the configuration they were made by. */
  com.fasterxml.jackson.databind.node.ObjectNode info(LocalServer.Builder config) {
    com.fasterxml.jackson.databind.node.ObjectNode out = io.sandboxes.e2b.internal.Json.object()
        .put("serverId", config.serverId)
        .put("pid", ProcessHandle.current().pid())
        .put("host", config.host)
        .put("apiUrl", String.valueOf(apiUrl))
        .put("sandboxUrl", String.valueOf(sandboxUrl))
        .put("runtime", runtime.name() == null ? "runc" : runtime.name())
        .put("gvisor", runtime.gvisor())
        .put("internetByDefault", config.internetByDefault)
        .put("egressEnforced", network != null)
        .put("keepSandboxesOnClose", config.keepSandboxesOnClose);
    com.fasterxml.jackson.databind.node.ObjectNode pool = out.putObject("warmPool");
    config.warmPool.forEach(pool::put);
    out.put("warmPoolMax", registry.warmPoolMax());
    com.fasterxml.jackson.databind.node.ObjectNode now = out.putObject("warmPoolNow"); // per template: ready now, target now
    registry.poolStatus().forEach((t, n) -> now.putObject(t).put("ready", n[0]).put("target", n[1]));
    return out;
  }

  /** {@link LocalServer#forward}: a listener on {@code host} relaying to a sandbox's port. */
  URI forward(String sandboxId, int port, String host, Duration idle) {
    LocalSandbox sandbox = registry.find(sandboxId)
        .orElseThrow(() -> new SandboxNotFoundException(sandboxId, "this server has no such sandbox"));
    try {
      return sandbox.ports().forward(port, host, idle, registry.trafficWake());
    } catch (PortForwards.LimitReached e) {
      throw new SandboxException(e.getMessage(), e);
    } catch (java.io.IOException e) {
      throw new SandboxException("forwarding port " + port + " of sandbox " + sandboxId + " failed: " + e.getMessage(), e);
    }
  }

  /** {@link LocalServer#diskLimitMechanism()}'s names for the registry's mechanisms. */
  String diskLimitMechanism() {
    return switch (registry.diskLimitMechanism()) {
      case QUOTA -> "quota";
      case MEASURED_BLOCKS -> "measured-blocks";
      case MEASURED_SIZE_RW -> "measured-size-rw";
    };
  }

  /** Ready members per template with a warm pool. */
  Map<String, Integer> warmPoolReady() {
    Map<String, Integer> out = new HashMap<>();
    registry.poolStatus().forEach((t, n) -> out.put(t, n[0]));
    return out;
  }

  /**
   * The witnesses of the sandbox network when there is one; otherwise (not started, or egress not
   * enforceable) the same names with a loopback IP, which a sandbox without network cannot reach.
   */
  static EgressProbe egressProbe(@Nullable ServerParts parts) {
    SandboxNetwork n = parts == null ? null : parts.network;
    if (n != null) {
      return n.probe();
    }
    return new EgressProbe(SandboxNetwork.ALLOWED_WITNESS, SandboxNetwork.DENIED_WITNESS, "127.0.0.9",
        List.of(SandboxNetwork.ALLOWED_WITNESS), "http");
  }

  /**
   * Template builds' steps run on their own network behind the host firewall when egress can be
   * enforced; where it cannot (no root, no iptables, a remote engine) they stay on Docker's
   * default bridge, as Docker would run them, and the server says so once.
   */
  private static String buildNetwork(Optional<SandboxNetwork> network) {
    if (network.isPresent()) {
      return SandboxNetwork.BUILD_NETWORK;
    }
    LOG.warn("template build steps run on Docker's default bridge: egress cannot be enforced here, so they are not kept "
        + "from this host and its private networks");
    return "bridge";
  }

  /**
   * Empties and removes the folder where servers before streamed uploads spooled multipart
   * bodies; a server killed mid-upload left its spool there. Only the folder's own entries go,
   * none followed: a link in it is removed, never what it points to.
   */
  static void removeLegacySpool(Path folder) {
    if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> entries = Files.list(folder)) {
      for (Path p : (Iterable<Path>) entries::iterator) {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(folder);
      StructuredLog.atInfo(LOG).addKeyValue("event", "server.spool-removed").addKeyValue("folder", folder)
          .log("removed the upload spool a previous server left");
    } catch (java.io.IOException | RuntimeException e) {
      LOG.warn("the upload spool {} a previous server left could not be removed: {}", folder, e.toString());
    }
  }

  /** A request or keep-alive idle time: 1 ms to {@link #ANSWER_IDLE_TIMEOUT}. */
  static Duration idleTimeout(String what, Duration timeout) {
    Objects.requireNonNull(timeout, what);
    if (timeout.toMillis() < 1 || timeout.compareTo(ANSWER_IDLE_TIMEOUT) > 0) {
      throw new IllegalArgumentException(what + " must be between 1 ms and " + ANSWER_IDLE_TIMEOUT + ", got " + timeout);
    }
    return timeout;
  }

  /** A duration of at least a millisecond. */
  static Duration positive(String what, Duration timeout) {
    if (Objects.requireNonNull(timeout, what).toMillis() < 1) {
      throw new IllegalArgumentException(what + " must be at least 1 ms, got " + timeout);
    }
    return timeout;
  }

  /** A number of at least {@code min}. */
  static int atLeast(String what, int value, int min) {
    if (value < min) {
      throw new IllegalArgumentException(what + " must be at least " + min + ", got " + value);
    }
    return value;
  }

  /** A port to listen on: 0 (any free one) to 65535. */
  static int checkPort(int port, String name) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(name + " must be between 0 and 65535, got " + port);
    }
    return port;
  }

  /** {@code $SANDBOXES_STATE_DIR}, else {@code ~/.local/state/sandboxes-local}. */
  static Path defaultStateRoot() {
    String env = System.getenv("SANDBOXES_STATE_DIR");
    if (env != null && !env.isBlank()) {
      return Path.of(env);
    }
    return Path.of(System.getProperty("user.home"), ".local", "state", "sandboxes-local");
  }

  private static ServerConnector connector(Server server, HttpConfiguration http, LocalServer.Builder config, int port) {
    ServerConnector c = new ServerConnector(server, new HttpConnectionFactory(http));
    c.setHost(config.host);
    c.setPort(port);
    c.setIdleTimeout(config.requestIdleTimeout.toMillis()); // raised while a request is answered: StallGuard
    server.addConnector(c);
    return c;
  }
}
