package io.sandboxes.local;

import io.sandboxes.SandboxException;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.Templates;
import io.sandboxes.local.internal.egress.SandboxNetwork;
import io.sandboxes.local.internal.docker.SandboxRuntime;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sandboxes-local}: an E2B-compatible server whose sandboxes are Docker containers.
 *
 * <p>It serves E2B's control plane on one port and the in-sandbox daemon (envd) for every
 * sandbox on another, both on 127.0.0.1. Any E2B client reaches it with
 * {@code E2B_API_URL=}{@link #apiUrl()}, {@code E2B_SANDBOX_URL=}{@link #sandboxUrl()} and
 * {@code E2B_API_KEY=}{@link #apiKey()}; the official SDKs send volume content calls to
 * {@code E2B_VOLUME_API_URL}, which is {@link #apiUrl()} too.
 *
 * {@snippet class=io.sandboxes.snippets.LocalSnippets region=local-server :
 * try (LocalServer server = LocalServer.builder().build().start()) {
 *   System.out.println("E2B_API_URL=" + server.apiUrl());
 * }
 * }
 *
 * <p>Secure by default: loopback only, an API key on every control-plane call, a separate
 * access token per sandbox on every daemon call, and containers with no network.
 *
 * @since 0.1
 */
public final class LocalServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalServer.class);

  /** The port E2B's daemon listens on, which a standalone server uses for its envd by default. */
  public static final int DEFAULT_ENVD_PORT = 49983;
  /** The control-plane port a standalone server uses by default. */
  public static final int DEFAULT_API_PORT = 3000;
  /** How long a request's headers or body may stall, and a new connection wait, by default. */
  public static final Duration DEFAULT_REQUEST_IDLE_TIMEOUT = Duration.ofSeconds(30);
  /**
   * How long a connection is kept between an answer and its next request, by default: longer
   * than the common HTTP clients keep theirs (the JDK's 30 s, Node's 4 s), so the client, not the
   * server, is the one that drops an idle connection, and never one it is about to reuse.
   */
  public static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(65);
  /** How many pre-started {@code base} sandboxes a server keeps ready unless told otherwise. */
  public static final int DEFAULT_WARM_POOL = 2;
  /**
   * The least a template's warm pool may grow to with demand by default, and what it grows to when the engine's memory is
   * unknown: a burst of ten or an 8-way parallel suite with room to spare (the default from memory: {@link Builder#warmPoolMax}).
   */
  public static final int DEFAULT_WARM_POOL_MAX = 16;
  private final Builder config;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** The server's parts, once started. */
  private volatile @Nullable ServerParts parts;
  /** When a request last came in, for {@link #idleFor}. */
  final RequestActivity activity = new RequestActivity();

  private LocalServer(Builder config) {
    this.config = config;
  }

  /**
   * Starts configuring a server.
   *
   * @return a builder with secure defaults: loopback, ephemeral ports, a random API key
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Connects to Docker, makes sure the base image exists (building it when it does not), and
   * starts serving.
   *
   * @return this server, started
   * @throws SandboxException when Docker cannot be reached or the image cannot be built
   */
  public LocalServer start() {
    if (parts != null) {
      throw new IllegalStateException("already started");
    }
    ServerParts started = ServerParts.assemble(this, config);
    this.parts = started; // before the ports open, so no request finds the server without its parts
    try {
      started.serve(config);
    } catch (RuntimeException | Error e) {
      this.parts = null;
      throw e;
    }
    return this;
  }

  /** The server's parts; only after {@link #start()}. */
  private ServerParts parts() {
    return Objects.requireNonNull(parts, "not started");
  }

  /** The control plane's URL once serving, else null (template builds name their upload links by it). */
  @Nullable URI startedApiUrl() {
    ServerParts p = parts;
    return p == null ? null : p.apiUrl;
  }

  /** {@return the control-plane base URL, for {@code E2B_API_URL}; only after {@link #start()}} */
  public URI apiUrl() {
    return Objects.requireNonNull(parts().apiUrl, "not started");
  }

  /** {@return where the in-sandbox daemon (envd) of every sandbox listens, for {@code E2B_SANDBOX_URL}; only after {@link #start()}} */
  public URI sandboxUrl() {
    return Objects.requireNonNull(parts().sandboxUrl, "not started");
  }

  /**
   * Names the OCI runtime this server's sandboxes run on; only after {@link #start()}.
   *
   * @return the Docker runtime's name, e.g. {@code runsc} for gVisor, or {@code runc} when the
   *     builder named none and the engine's default is used
   * @see Builder#runtime(String)
   */
  public String runtime() {
    SandboxRuntime r = parts().runtime;
    return r.name() == null ? "runc" : r.name();
  }

  /**
   * Tells whether this server's sandboxes run under gVisor; only after {@link #start()}.
   *
   * @return true when their runtime is gVisor's {@code runsc}, whose own kernel serves their system calls
   */
  public boolean gvisor() {
    return parts().runtime.gvisor();
  }

  /**
   * Says how this server holds its sandboxes' disk limits; only after {@link #start()}.
   *
   * @return {@code quota} when Docker's storage driver enforces the size, {@code measured-blocks}
   *     when the server measures each writable layer's allocated blocks and stops a sandbox past
   *     its limit, {@code measured-size-rw} when it measures Docker's {@code SizeRw} instead
   */
  public String diskLimitMechanism() {
    return parts().diskLimitMechanism();
  }

  /**
   * What egress verification should probe on this server: its witnesses (an allowed host name, a
   * denied host name, a raw IP), all on loopback or on the network the server made. Where egress
   * cannot be enforced, the same names with a loopback IP, which a sandbox without network
   * cannot reach either, so verification reports inconclusive.
   *
   * @return the probe for {@code E2BSandboxProvider.Builder.egressProbe}
   */
  public io.sandboxes.EgressProbe egressProbe() {
    return ServerParts.egressProbe(parts);
  }

  /**
   * How many pre-started sandboxes are ready to be claimed now, per template that has a warm
   * pool (see {@link Builder#warmPool(String, int)}); only after {@link #start()}.
   *
   * @return template id to ready members, in no particular order
   */
  public java.util.Map<String, Integer> warmPoolReady() {
    return parts().warmPoolReady();
  }

  /**
   * What {@code GET /local/server} answers: enough for a client that found this server to check
   * it is what it means to use (its process, loopback, its runtime, its default egress).
   */
  com.fasterxml.jackson.databind.node.ObjectNode info() {
    return parts().info(config);
  }

  /** This server's id: its sandboxes' containers carry it; only for this module. */
  String serverId() {
    return config.serverId;
  }

  /**
   * Tells whether this server has had nothing to do for a while: no sandbox (running or paused;
   * warm pool members do not count), no request being answered, and none for at least {@code quiet}.
   */
  boolean idleFor(Duration quiet) {
    return registry().list().isEmpty() && activity.quietFor(quiet);
  }

  /** The sandbox network, where egress is enforced (tests attack it directly). */
  java.util.Optional<SandboxNetwork> network() {
    ServerParts p = parts;
    return java.util.Optional.ofNullable(p == null ? null : p.network);
  }

  /** The sandboxes, for this module's tests; only after {@link #start()}. */
  Registry registry() {
    return parts().registry;
  }

  /** The template builds, for this module's tests; only after {@link #start()}. */
  io.sandboxes.local.internal.TemplateBuilds templateBuilds() {
    return parts().builds;
  }

  /**
   * Makes a port inside a sandbox reachable from this machine, as a preview URL is on E2B: a
   * listener on this server's address whose every connection is relayed to that port on the
   * sandbox's own loopback (127.0.0.1, or ::1 when IPv4 is refused) by the sandbox's daemon, over
   * its connection to this server, so the sandbox needs no network and gains no route out, and
   * the template needs nothing for it (no python, no shell). Asking again for the same port gives
   * the same URL while its listener lives. A sandbox has at most 16 forwarded ports and this
   * server process 256; a port nothing has connected to for the idle time
   * ({@link Builder#portForwardIdleTimeout}, ten minutes by default) stops listening, and
   * listening stops when the sandbox is killed or this server stops. Nothing needs to listen on
   * the port yet; a connection made while nothing does is closed at once.
   *
   * @param sandboxId a sandbox of this server
   * @param port the port inside the sandbox, 1 to 65535
   * @return {@code http://<address>:<port>} on this machine
   * @throws io.sandboxes.SandboxNotFoundException when this server has no such sandbox
   * @throws IllegalArgumentException for a port out of range
   * @throws SandboxException when the sandbox or this server already forwards as many ports as it may
   */
  public URI forward(String sandboxId, int port) {
    return parts().forward(sandboxId, port, config.host, config.portForwardIdleTimeout);
  }

  /** @return whether a create that does not say {@code allow_internet_access} gets it (E2B's default) */
  boolean internetByDefault() {
    return config.internetByDefault;
  }

  /** {@return whether this server enforces sandboxes' network policies (otherwise they have no network at all)} */
  public boolean egressEnforced() {
    ServerParts p = parts;
    return p != null && p.network != null;
  }

  /** {@return the API key clients must send, for {@code E2B_API_KEY}} */
  public String apiKey() {
    return config.apiKey;
  }

  /** Stops serving. Sandboxes are killed unless the builder said to keep them. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    ServerParts p = parts;
    if (p != null) {
      p.close(!config.keepSandboxesOnClose);
    }
    StructuredLog.atInfo(LOG).addKeyValue("event", "server.stopped").addKeyValue("server", config.serverId)
        .addKeyValue("sandboxesKept", config.keepSandboxesOnClose).log("sandboxes-local stopped");
  }

  /** Configures a {@link LocalServer}. */
  public static final class Builder {
    String host = "127.0.0.1";
    int apiPort;
    int envdPort;
    String apiKey = "e2b_" + Registry.newToken();
    boolean keepSandboxesOnClose;
    String serverId = "inproc-" + Registry.newSandboxId().substring(0, 8);
    boolean serverIdGiven; // whether the id was chosen: a fresh id without a state folder of its own leaves no secrets behind
    @Nullable Path stateDir;
    Consumer<String> progress = line -> { };
    boolean openEgress, internetByDefault;
    boolean allowedWitness = true;
    @Nullable Path extraCaCerts; // CAs sandboxes and the egress gateway trust too (serve --extra-ca-certs)
    final java.util.Map<String, java.net.InetSocketAddress> egressNamesForTesting = new java.util.LinkedHashMap<>(); // tests' witnesses
    io.sandboxes.local.internal.egress.@Nullable UpstreamProxy upstreamProxy;
    Duration requestIdleTimeout = DEFAULT_REQUEST_IDLE_TIMEOUT;
    Duration keepAliveTimeout = DEFAULT_KEEP_ALIVE_TIMEOUT;
    Duration portForwardIdleTimeout = io.sandboxes.local.internal.PortForwards.DEFAULT_IDLE;
    int diskSizeMB = Registry.DEFAULT_DISK_SIZE_MB;
    @Nullable String runtime;
    int templateBuildBudgetMB;
    final java.util.Map<String, Integer> warmPool = new java.util.LinkedHashMap<>(java.util.Map.of(Templates.BASE, DEFAULT_WARM_POOL));
    @Nullable Integer warmPoolMax; // null: from the engine's memory

    private Builder() {}

    /**
     * Sets how many pre-started sandboxes of the {@code base} template the server keeps ready. A
     * create without volume mounts takes one (its id, token, metadata, env, deadline and network
     * policy bound at that moment) instead of starting a container, and the pool is refilled in
     * the background. Idle members cost memory (see docs/local-runtime.md); 0 turns the pool off.
     *
     * @param size 0 to 64; {@link #DEFAULT_WARM_POOL} by default
     * @return this
     */
    public Builder warmPool(int size) {
      return warmPool(Templates.BASE, size);
    }

    /**
     * Sets how many pre-started sandboxes of one template the server keeps ready.
     *
     * @param templateId {@code base} or a snapshot template's id as a create names it
     * @param size 0 to 64; 0 turns that template's pool off
     * @return this
     */
    public Builder warmPool(String templateId, int size) {
      Objects.requireNonNull(templateId, "templateId");
      if (size < 0 || size > 64) {
        throw new IllegalArgumentException("a warm pool holds 0 to 64 sandboxes, not " + size);
      }
      warmPool.put(templateId, size);
      return this;
    }

    /**
     * Sets the most pre-started sandboxes a template's warm pool grows to. The size given to
     * {@link #warmPool(String, int)} is the floor; the pool grows with demand (the creates of the
     * last ten seconds), refilling several members at once, and falls back to the floor once no
     * create has come for a minute, its surplus removed. A floor above the maximum wins. Back-to-back
     * creates beyond the maximum start cold (a cold start takes far longer than a warm cycle, so no
     * refill keeps up with them), so a suite of N tests that each create a sandbox runs its next
     * run warm when the maximum is at least N.
     *
     * @param max 0 to 64 ({@code 0}: each pool keeps its floor); by default as many as fit in a 64th of the
     *     engine's memory at 8 MiB each, {@link #DEFAULT_WARM_POOL_MAX} to 64 ({@code GET /local/server} reports it)
     * @return this
     */
    public Builder warmPoolMax(int max) {
      if (max < 0 || max > 64) {
        throw new IllegalArgumentException("a warm pool grows to 0 to 64 sandboxes, not " + max);
      }
      warmPoolMax = max;
      return this;
    }

    /**
     * Sets how long a client may stall while sending a request's headers or body, and how long
     * a new connection may wait for its first request, before the server closes it. Answers
     * that take long (a process's stream quiet between keepalives, a download a slow client
     * reads) are not cut by it: once a request has been read whole, its connection may be silent
     * for up to five minutes.
     *
     * @param timeout at least one millisecond; {@link #DEFAULT_REQUEST_IDLE_TIMEOUT} by default
     * @return this
     */
    public Builder requestIdleTimeout(Duration timeout) {
      this.requestIdleTimeout = ServerParts.idleTimeout("requestIdleTimeout", timeout);
      return this;
    }

    /**
     * Sets how long a connection is held between an answer and the client's next request. Keep
     * it longer than the clients' own keep-alive: a client that reuses a connection just as the
     * server drops it sees its request fail without having reached the server, and clients
     * retry only idempotent requests (a create or a process start is not retried).
     *
     * @param timeout at least one millisecond, at most five minutes; {@link
     *     #DEFAULT_KEEP_ALIVE_TIMEOUT} by default
     * @return this
     */
    public Builder keepAliveTimeout(Duration timeout) {
      this.keepAliveTimeout = ServerParts.idleTimeout("keepAliveTimeout", timeout);
      return this;
    }

    /**
     * Sets how long a forwarded port ({@link LocalServer#forward}) keeps listening with no
     * connection to it: an idle one stops listening, and asking for the port again gives a new
     * address.
     *
     * @param timeout at least one millisecond; ten minutes by default
     * @return this
     */
    public Builder portForwardIdleTimeout(Duration timeout) {
      this.portForwardIdleTimeout = ServerParts.positive("portForwardIdleTimeout", timeout);
      return this;
    }

    /**
     * Sets the control plane's port.
     *
     * @param port the control-plane port; 0 picks a free one
     * @return this
     */
    public Builder apiPort(int port) {
      this.apiPort = ServerParts.checkPort(port, "apiPort");
      return this;
    }

    /**
     * Sets the in-sandbox daemon's port.
     *
     * @param port the daemon port; 0 picks a free one
     * @return this
     */
    public Builder envdPort(int port) {
      this.envdPort = ServerParts.checkPort(port, "envdPort");
      return this;
    }

    /**
     * Sets the API key, instead of a random one.
     *
     * @param apiKey the key clients must send; E2B's SDK 2.45 wants {@code e2b_} and hex digits
     * @return this
     */
    public Builder apiKey(String apiKey) {
      if (Objects.requireNonNull(apiKey, "apiKey").isBlank()) {
        throw new IllegalArgumentException("apiKey must not be blank");
      }
      this.apiKey = apiKey;
      return this;
    }

    /**
     * Sets the address the server listens on.
     *
     * @param host the address to bind; loopback by default, and anything else exposes sandboxes
     *     to the network
     * @return this
     */
    public Builder host(String host) {
      this.host = Objects.requireNonNull(host, "host");
      return this;
    }

    /**
     * Says whether closing the server leaves its sandboxes running.
     *
     * @param keep whether sandboxes outlive the server's {@link #close()} (default: killed)
     * @return this
     */
    public Builder keepSandboxesOnClose(boolean keep) {
      this.keepSandboxesOnClose = keep;
      return this;
    }

    /**
     * Names this server's sandboxes. A server started again with the same id takes back the
     * sandboxes it left running or paused; servers with other ids never touch them. By default
     * each server gets a fresh id, so an in-process server never adopts another's sandboxes.
     *
     * @param serverId letters, digits, '-' and '_'
     * @return this
     */
    public Builder serverId(String serverId) {
      if (!Objects.requireNonNull(serverId, "serverId").matches("[A-Za-z0-9_-]{1,64}")) {
        throw new IllegalArgumentException("serverId must be 1 to 64 letters, digits, '-' or '_', got '" + serverId + "'");
      }
      this.serverId = serverId;
      this.serverIdGiven = true;
      return this;
    }

    /**
     * Sets the disk limit of every sandbox this server makes: the most its writable layer (its
     * own filesystem, not its volumes) may hold. Where Docker's storage driver can enforce a size
     * it does (the sandbox sees a full disk); where it cannot (overlay2 on ext4), the layer is
     * measured every few seconds and a sandbox past its limit is stopped, and later calls for its
     * id say so. The log at start says which applies. Sandboxes report it as {@code diskSizeMB}.
     *
     * @param mb the limit in MB, at least 16; 10240 by default
     * @return this
     */
    public Builder diskSizeMB(int mb) {
      this.diskSizeMB = ServerParts.atLeast("diskSizeMB", mb, 16);
      return this;
    }

    /**
     * Chooses the OCI runtime the server's sandboxes (and its template builds' steps) run on, by
     * its name in Docker. By default they run on the engine's default runtime, runc, where a
     * sandbox shares the host's kernel: a kernel exploit inside one reaches the host. With
     * gVisor ({@code runsc}), a user-space kernel serves the sandbox's system calls, so the host
     * kernel is far less exposed; sandboxes start somewhat slower and raw sockets are refused
     * inside them. Docker must know the runtime ({@code scripts/docker-up.sh --runsc} registers
     * gVisor as {@code runsc}); {@link LocalServer#start()} refuses, saying what to do, a runtime
     * Docker does not list, one that is neither runc nor gVisor, and gVisor registered without
     * the arguments the sandboxes need ({@code --host-uds=open}, {@code --network=host}).
     *
     * <p>{@code Sandboxes.local()} reads it from the system property {@code sandboxes.local.runtime}.
     *
     * @param runtime {@code runsc} for gVisor, {@code runc}, or any name Docker runs gVisor under
     * @return this
     */
    public Builder runtime(String runtime) {
      if (!Objects.requireNonNull(runtime, "runtime").matches("[A-Za-z0-9][A-Za-z0-9._-]{0,63}")) {
        throw new IllegalArgumentException("a runtime is named by 1 to 64 letters, digits, '.', '-' or '_', got '" + runtime + "'");
      }
      this.runtime = runtime;
      return this;
    }

    /**
     * Sets what one template build's COPY steps may expand their uploaded files to: every byte
     * their archives expand to counts (and each file, folder or link written, one per 16 KiB of
     * the budget), and a build past it fails with an error naming the budget. All uploaded build
     * files kept together may hold as much. A gzip bomb in an upload costs the server's CPU and
     * disk at most this much.
     *
     * @param mb the budget in MiB, at least 1; by default the disk limit of each sandbox
     *     ({@link #diskSizeMB(int)}, 10240 unless set)
     * @return this
     */
    public Builder templateBuildBudgetMB(int mb) {
      this.templateBuildBudgetMB = ServerParts.atLeast("templateBuildBudgetMB", mb, 1);
      return this;
    }

    /**
     * Sets where the server keeps its sandboxes' state between runs.
     *
     * @param stateDir where the changing state of each sandbox (deadline, pause) is kept; by
     *     default {@code $SANDBOXES_STATE_DIR} or {@code ~/.local/state/sandboxes-local}, then the
     *     server id
     * @return this
     */
    public Builder stateDir(Path stateDir) {
      this.stateDir = Objects.requireNonNull(stateDir, "stateDir");
      return this;
    }

    /**
     * Chooses the egress of a sandbox whose create does not say {@code allow_internet_access}.
     * By default this runtime gives it nothing (only what {@code network.allowOut} lists);
     * {@code true} applies E2B's default instead: open to everything but {@code network.denyOut},
     * unless the create says {@code allow_internet_access: false}. Code written against E2B's
     * semantics then runs unchanged. Each sandbox's log says which applied. Where egress cannot
     * be enforced, sandboxes have no network either way.
     *
     * @param open whether a create that says nothing gets internet access (default false)
     * @return this
     */
    public Builder internetByDefault(boolean open) {
      this.internetByDefault = open;
      return this;
    }

    /**
     * Sends what sandboxes may reach through a proxy, unless one names its own {@code egressProxy} (docs/local-runtime.md).
     *
     * @param url {@code socks5h://}, {@code socks5://} or {@code http://host:port}, with {@code user:password@} if needed
     * @return this
     */
    public Builder upstreamProxy(String url) {
      this.upstreamProxy = io.sandboxes.local.internal.egress.UpstreamProxy.parse(Objects.requireNonNull(url, "url"));
      return this;
    }

    /**
     * For testing egress verification only: every sandbox gets unrestricted networking, whatever
     * its policy.
     *
     * @param open whether egress is deliberately left open
     * @return this
     */
    public Builder openEgressForTesting(boolean open) {
      this.openEgress = open;
      return this;
    }

    /**
     * For testing egress verification only: whether the allowed witness answers.
     *
     * @param up false to leave it down
     * @return this
     */
    public Builder allowedWitnessForTesting(boolean up) {
      this.allowedWitness = up;
      return this;
    }

    /**
     * Sets where base-image build progress goes (nowhere by default).
     *
     * @param progress receives a line per step while the base image is built
     * @return this
     */
    public Builder progress(Consumer<String> progress) {
      this.progress = Objects.requireNonNull(progress, "progress");
      return this;
    }

    /**
     * Creates the server; nothing runs until {@link LocalServer#start()}.
     *
     * @return a server, not yet started
     */
    public LocalServer build() {
      return new LocalServer(this);
    }
  }
}
