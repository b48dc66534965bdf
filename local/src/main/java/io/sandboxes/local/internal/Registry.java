package io.sandboxes.local.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local runtime's sandboxes: creation from a template, lookup, listing, pause and resume,
 * deadlines and kill.
 *
 * <p>Immutable facts about a sandbox live in its container's labels; the facts that change (its
 * deadline, whether and how it is paused) live in a small JSON file per sandbox in the server's
 * state folder. A restarted server finds its sandboxes again from both, and reports each as what
 * Docker now shows it to be: a frozen container is paused, a running one runs, a stopped one is
 * paused only when this server stopped it for a filesystem-only pause. Anything else (a
 * memory-keeping pause that a Docker restart turned into a stopped container) is reported gone.
 */
public final class Registry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  /** Resources of every local sandbox. */
  public static final int CPU_COUNT = 2;
  public static final int MEMORY_MB = 1024;
  /** The disk limit of a sandbox (its writable layer) when the server is given none: 10 GiB. */
  public static final int DEFAULT_DISK_SIZE_MB = 10 * 1024;
  /** How long a sandbox stopped for its disk stays known, so calls for it say why it is gone. */
  static final Duration STOPPED_RETENTION = Duration.ofHours(1);
  static final String LABEL_DISK = "io.sandboxes.disk-mb";
  public static final long PIDS_LIMIT = 1024;
  public static final String ENVD_VERSION = "0.6.13";
  static final String LABEL_LIFECYCLE = "io.sandboxes.lifecycle";
  static final String LABEL_VOLUMES = "io.sandboxes.volumes";
  /** On a fork's container: the image of its parent's filesystem it was made from; empty on others. */
  static final String LABEL_FORK_IMAGE = "io.sandboxes.fork-image";
  /** On a captured fork image: the sandbox it is the filesystem of. */
  static final String LABEL_FORK_OF = "io.sandboxes.fork-of";
  static final String FORK_REPOSITORY = "sandboxes-local/fork";
  /** The most forks one request may ask for, as E2B allows. */
  public static final int MAX_FORKS = 100;
  /** How many forks of one request start at once. */
  private static final int FORK_PARALLELISM = 3;

  private final DockerRuntime docker;
  private final Templates templates;
  private final String serverId;
  private final Path stateDir;
  private final StateFiles states;
  private final SandboxNetworking networking;
  private final OutsideEvents outside;
  private final ConcurrentMap<String, LocalSandbox> sandboxes = new ConcurrentHashMap<>();
  private final Thread reaper;
  private final MetricsSampler metrics;
  private final java.util.Optional<io.sandboxes.local.internal.egress.SandboxNetwork> network;
  private final Path daemonBinary;
  private final ContainerEvents events;
  private final int diskSizeMB;
  private final DiskGuard diskGuard;
  /** Sandboxes stopped by the server (not by a caller), with why and when, for {@link #STOPPED_RETENTION}. */
  private final ConcurrentMap<String, Stopped> stopped = new ConcurrentHashMap<>();

  private record Stopped(String reason, Instant at) {}
  private final ForkImages forkImages;
  private final WarmPool pool;

  /**
   * @param templates template id to image reference
   * @param serverId whose sandboxes these are: a restarted server with the same id takes them back
   * @param stateDir where the changing state of each sandbox is kept
   * @param diskSizeMB each sandbox's disk limit
   * @param warmPool template id to how many pre-started members it keeps ready (0: none)
   */
  public Registry(DockerRuntime docker, Templates templates, String serverId, Path stateDir,
      java.util.Optional<io.sandboxes.local.internal.egress.SandboxNetwork> network, int diskSizeMB, Map<String, Integer> warmPool) {
    this.docker = docker;
    this.diskSizeMB = diskSizeMB;
    this.templates = templates;
    this.network = network;
    this.serverId = serverId;
    this.stateDir = stateDir;
    this.states = new StateFiles(stateDir);
    this.networking = new SandboxNetworking(network, states);
    this.forkImages = new ForkImages(docker, serverId);
    this.outside = new OutsideEvents(sandboxes, docker, states, networking, forkImages);
    try {
      this.daemonBinary = io.sandboxes.local.internal.daemon.DaemonBinary.install(stateDir.resolve("envd-bin"));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("the sandbox daemon could not be put in " + stateDir, e);
    }
    new SandboxRecovery(sandboxes, docker, serverId, states, networking, outside, forkImages, diskSizeMB).recover();
    this.diskGuard = DiskGuard.start(docker, templates.resolve("base"), serverId,
        () -> List.copyOf(sandboxes.values()), (s, reason) -> kill(s.id(), reason));
    this.pool = new WarmPool(warmPool, new WarmPool.Maker() {
      @Override
      public WarmPool.Member start(String templateId) throws Exception {
        return startMember(templateId);
      }

      @Override
      public void discard(WarmPool.Member m) {
        discardMember(m);
      }
    });
    this.reaper = Thread.ofVirtual().name("sandboxes-reaper").start(this::reap);
    this.metrics = new MetricsSampler(sandboxes, docker);
    this.events = new ContainerEvents(docker, serverId, this::containerChanged, outside::freezeChanged, outside::resync);
  }

  /** @return how sandboxes' disk limits are held on this engine */
  public DiskGuard.Mechanism diskLimitMechanism() {
    return diskGuard.mechanism();
  }

  /**
   * Why the server stopped a sandbox that is gone, if it did within {@link #STOPPED_RETENTION}.
   *
   * @return the reason, e.g. {@code stopped: its writable layer passed its disk limit of 64 MB}
   */
  public Optional<String> stoppedReason(String id) {
    Stopped s = stopped.get(id);
    if (s == null || s.at().plus(STOPPED_RETENTION).isBefore(Instant.now())) {
      return Optional.empty();
    }
    return Optional.of(s.reason());
  }

  /** Kills a sandbox for a reason, which later calls for its id are told (for an hour). */
  public boolean kill(String id, String reason) {
    Instant now = Instant.now();
    stopped.values().removeIf(s -> s.at().plus(STOPPED_RETENTION).isBefore(now));
    boolean recorded = stopped.size() < 10_000;
    Stopped before = recorded ? stopped.put(id, new Stopped(reason, now)) : null;
    boolean killed = kill(id);
    if (!killed && recorded) {
      // no such sandbox: an earlier stop's reason (a second DELETE's first) stays what it was
      if (before != null) {
        stopped.put(id, before);
      } else {
        stopped.remove(id);
      }
    }
    return killed;
  }

  public static String newSandboxId() {
    char[] id = new char[20];
    for (int i = 0; i < id.length; i++) {
      id[i] = ID_ALPHABET[RANDOM.nextInt(ID_ALPHABET.length)];
    }
    return new String(id);
  }

  public static String newToken() {
    byte[] b = new byte[24];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  public Templates templates() {
    return templates;
  }

  /** Creates and starts a sandbox from a template. */
  public LocalSandbox create(String templateId, Duration timeout, Map<String, String> metadata, Map<String, String> envVars,
      LocalSandbox.Lifecycle lifecycle, List<LocalSandbox.VolumeMount> mounts) throws RpcError {
    String image = templates.resolve(templateId);
    if (image == null) {
      throw new RpcError("not_found", "template '" + templateId + "' not found");
    }
    // refills wait while creates are under way: they would compete with a cold start for Docker
    Runnable ended = pool.createBegins();
    try {
      if (mounts.isEmpty()) {
        // volumes are mounted at container create: a sandbox with mounts always starts cold
        WarmPool.Member m;
        while ((m = pool.claim(templateId)) != null) {
          LocalSandbox claimed = claim(m, image, templateId, timeout, metadata, envVars, lifecycle);
          if (claimed != null) {
            return claimed;
          }
        }
      }
      return start(image, "", templateId, timeout, metadata, envVars, lifecycle, mounts);
    } finally {
      ended.run();
    }
  }

  /**
   * Starts a sandbox from an image: a template's, or (with {@code forkImage} not empty) the
   * captured filesystem of the sandbox it is a fork of.
   */
  private LocalSandbox start(String image, String forkImage, String templateId, Duration timeout, Map<String, String> metadata,
      Map<String, String> envVars, LocalSandbox.Lifecycle lifecycle, List<LocalSandbox.VolumeMount> mounts) throws RpcError {
    String id = newSandboxId();
    String token = newToken();
    Instant started = Instant.now();
    Instant end = started.plus(timeout);
    Map<String, String> labels = new HashMap<>();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(DockerRuntime.LABEL_SANDBOX_ID, id);
    labels.put(DockerRuntime.LABEL_TEMPLATE, templateId);
    labels.put(DockerRuntime.LABEL_METADATA, Json.string(Json.toObject(metadata)));
    labels.put(DockerRuntime.LABEL_DEADLINE, end.toString());
    labels.put(DockerRuntime.LABEL_STARTED, started.toString());
    labels.put(DockerRuntime.LABEL_ENVD_TOKEN, token);
    labels.put(DockerRuntime.LABEL_SERVER, serverId);
    // always set, so a container never inherits the label from the image it was made from
    labels.put(LABEL_FORK_IMAGE, forkImage);
    // a fork image's own mark must not pass to its forks, nor from them to a snapshot of one
    labels.put(LABEL_FORK_OF, "");
    labels.put(LABEL_LIFECYCLE, Json.string(Json.object()
        .put("pauseOnTimeout", lifecycle.pauseOnTimeout())
        .put("autoPauseMemory", lifecycle.autoPauseMemory())
        .put("autoResume", lifecycle.autoResume())
        .put("timeoutSeconds", lifecycle.timeoutSeconds())));
    labels.put("io.sandboxes.env", Json.string(Json.toObject(envVars)));
    com.fasterxml.jackson.databind.node.ArrayNode mountJson = Json.array();
    Map<String, String> dockerVolumes = new java.util.LinkedHashMap<>();
    for (LocalSandbox.VolumeMount m : mounts) {
      mountJson.addObject().put("volumeId", m.volumeId()).put("name", m.name()).put("path", m.path());
      dockerVolumes.put("sandboxes-vol-" + m.volumeId(), m.path());
    }
    labels.put(LABEL_VOLUMES, Json.string(mountJson));
    labels.put(LABEL_DISK, Integer.toString(diskSizeMB));
    List<String> env = new ArrayList<>();
    network.ifPresent(n -> env.addAll(n.proxyEnv()));
    envVars.forEach((k, v) -> env.add(k + "=" + v));
    String containerId = null;
    SandboxDaemon daemon;
    long t0 = System.nanoTime();
    long tStarted;
    long tConnected;
    try {
      daemon = SandboxDaemon.open(SandboxDaemon.folderFor(stateDir, id));
    } catch (IOException e) {
      throw new RpcError("internal", "the sandbox's daemon socket could not be made: " + e.getMessage());
    }
    labels.put(SandboxDaemon.LABEL_FOLDER, daemon.folder().toString());
    try {
      containerId = docker.createAndStart(daemon.apply(new DockerRuntime.ContainerSpec(
          image, "sandboxes-" + id, labels, env, id, CPU_COUNT, MEMORY_MB * 1024L * 1024L, PIDS_LIMIT, dockerVolumes,
          networking.startNetwork())
          .withDiskQuotaMB(diskGuard.mechanism() == DiskGuard.Mechanism.QUOTA ? diskSizeMB : 0), daemonBinary));
      tStarted = System.nanoTime();
      daemon.awaitConnected(SandboxDaemon.CONNECT);
      tConnected = System.nanoTime();
      for (LocalSandbox.VolumeMount m : mounts) {
        // a fresh Docker volume's root belongs to root; the sandbox's user must be able to write it. find, where
        // coreutils fail: under gVisor (runsc 2022-12-19) their statx with AT_NO_AUTOMOUNT is refused
        docker.runAsRoot(containerId, "/bin/sh", "-c", "[ \"$(stat -c %u \"$1\" 2>/dev/null || find \"$1\" -maxdepth 0 -printf %U)\" = 0 ]"
            + " && [ -z \"$(ls -A \"$1\" 2>/dev/null || find \"$1\" -mindepth 1 -maxdepth 1)\" ] && chown 1000:1000 \"$1\"; true",
            "sh", m.path());
      }
      startService(image, daemon, containerId, id);
    } catch (RuntimeException | IOException | java.util.concurrent.TimeoutException e) {
      if (containerId != null) {
        docker.remove(containerId);
      }
      daemon.delete();
      LOG.warn("creating a sandbox from {} failed: {}", image, e.toString());
      throw new RpcError("internal", "the sandbox container could not be created: " + e.getMessage());
    }
    LocalSandbox sandbox = new LocalSandbox(id, containerId, templateId, token, metadata, envVars, started, end,
        CPU_COUNT, MEMORY_MB, diskSizeMB, lifecycle, mounts, docker, daemon);
    sandbox.proxyVars(networking.proxyVars());
    if (network.isPresent() && network.get().startsOnBridge()) {
      // open mode only: every other sandbox starts deny-all on "none" and joins the network when
      // a policy that allows something is set (setNetwork)
      try {
        sandbox.networkAddress(network.get().attach(containerId, sandbox::egressPolicy));
      } catch (IOException | RuntimeException e) {
        docker.remove(containerId);
        daemon.delete();
        LOG.warn("sandbox {} could not be put behind its egress firewall: {}", id, e.toString());
        throw new RpcError("internal", "the sandbox's egress firewall could not be set up: " + e.getMessage());
      }
    }
    // the state file is the create's commit: a container without one was never answered (the
    // server stopped midway), and a restarted server removes it rather than bring it back
    try {
      states.record(sandbox);
    } catch (IOException e) {
      docker.remove(containerId);
      daemon.delete();
      network.ifPresent(n -> n.detach(sandbox.networkAddress(), sandbox.containerId()));
      throw new RpcError("internal", "the sandbox's state could not be recorded in " + stateDir + ": " + e.getMessage());
    }
    outside.watch(sandbox);
    forkImages.track(id, forkImage);
    sandboxes.put(id, sandbox);
    sandbox.log("info", "sandbox created from template " + templateId + ", ends at " + end);
    long tDone = System.nanoTime();
    // where a cold create's time goes: Docker's create and start, the daemon's first connection, the rest
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.created").addKeyValue("sandbox", id).addKeyValue("template", templateId)
        .addKeyValue("container", containerId.substring(0, 12)).addKeyValue("endAt", end)
        .addKeyValue("dockerMs", (tStarted - t0) / 1_000_000).addKeyValue("daemonMs", (tConnected - tStarted) / 1_000_000)
        .addKeyValue("totalMs", (tDone - t0) / 1_000_000).log("sandbox created");
    return sandbox;
  }

  /** Runs the image's start command (the code interpreter's bridge), if it names one, and waits for its port. */
  private void startService(String image, SandboxDaemon daemon, String containerId, String id)
      throws IOException, java.util.concurrent.TimeoutException {
    Optional<StartCommand> service = StartCommand.of(docker, image);
    if (service.isEmpty()) {
      return;
    }
    io.sandboxes.local.internal.daemon.DaemonConnection conn = daemon.current();
    if (conn == null) {
      throw new IOException("the sandbox's daemon disconnected before its start command could run");
    }
    service.get().run(conn, daemon.containerEnv(docker, containerId), id);
  }

  // ---- the warm pool ----

  /**
   * Makes a claimed member a sandbox: its identity bound (held in memory and in the state file,
   * never in the container's config), the create's policy enforced through the gateway and, when
   * it allows more than the member's deny-all, its firewall, and the state file written as the
   * create's commit.
   *
   * @return the sandbox, or null when the member was unusable (it is then discarded)
   */
  private @Nullable LocalSandbox claim(WarmPool.Member m, String image, String templateId, Duration timeout,
      Map<String, String> metadata, Map<String, String> envVars, LocalSandbox.Lifecycle lifecycle) {
    if (!m.image().equals(image) || m.daemon().current() == null) {
      LOG.info("warm pool member {} is stale or lost its daemon; discarding it", m.id());
      discardMember(m);
      return null;
    }
    Instant started = Instant.now();
    LocalSandbox sandbox = new LocalSandbox(m.id(), m.containerId(), templateId, newToken(), metadata, envVars, started,
        started.plus(timeout), CPU_COUNT, MEMORY_MB, diskSizeMB, lifecycle, List.of(), docker, m.daemon());
    sandbox.proxyVars(networking.proxyVars());
    sandbox.markPooled();
    try {
      if (network.isPresent() && m.networkAddress() != null) {
        // open mode; every other member waits on "none" and joins when its policy allows something
        network.get().rebind(m.networkAddress(), m.containerId(), sandbox::egressPolicy);
        sandbox.networkAddress(m.networkAddress());
      }
      states.record(sandbox);
    } catch (IOException | RuntimeException e) {
      LOG.warn("claiming warm pool member {} failed; the create goes cold: {}", m.id(), e.toString());
      discardMember(m);
      states.forget(m.id());
      return null;
    }
    outside.watch(sandbox);
    sandboxes.put(m.id(), sandbox);
    // the name tells `status` and `docker ps` it is claimed; nothing depends on it, so it is not waited for
    Thread.ofVirtual().name("sandboxes-rename-" + m.id()).start(() -> {
      try {
        docker.client().renameContainerCmd(m.containerId()).withName("sandboxes-" + m.id()).exec();
      } catch (RuntimeException e) {
        LOG.debug("renaming claimed container of {} failed: {}", m.id(), e.toString());
      }
    });
    sandbox.log("info", "sandbox created from template " + templateId + " (warm pool), ends at " + sandbox.endAt());
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.created").addKeyValue("sandbox", m.id()).addKeyValue("template", templateId)
        .addKeyValue("container", m.containerId().substring(0, 12)).addKeyValue("endAt", sandbox.endAt())
        .addKeyValue("warm", true).log("sandbox created");
    return sandbox;
  }

  /**
   * Starts a pool member: no sandbox id, token, metadata, env or deadline in its config (the id it
   * will take is its hostname and name only), its daemon connected, its firewall deny-all before
   * it can be handed out.
   */
  private WarmPool.Member startMember(String templateId) throws Exception {
    String image = templates.resolve(templateId);
    if (image == null) {
      throw new IOException("template '" + templateId + "' not found");
    }
    String id = newSandboxId();
    Map<String, String> labels = new HashMap<>();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(DockerRuntime.LABEL_SERVER, serverId);
    labels.put(DockerRuntime.LABEL_TEMPLATE, templateId);
    labels.put(WarmPool.LABEL_POOL, "true");
    // as a cold sandbox's: never inherited from the image, and the disk limit it is held to
    labels.put(LABEL_FORK_IMAGE, "");
    labels.put(LABEL_FORK_OF, "");
    labels.put(LABEL_DISK, Integer.toString(diskSizeMB));
    List<String> env = new ArrayList<>();
    network.ifPresent(n -> env.addAll(n.proxyEnv()));
    SandboxDaemon daemon = SandboxDaemon.open(SandboxDaemon.folderFor(stateDir, id));
    labels.put(SandboxDaemon.LABEL_FOLDER, daemon.folder().toString());
    String containerId = null;
    String ip = null;
    try {
      containerId = docker.createAndStart(daemon.apply(new DockerRuntime.ContainerSpec(
          image, WarmPool.NAME_PREFIX + id, labels, env, id, CPU_COUNT, MEMORY_MB * 1024L * 1024L, PIDS_LIMIT, Map.of(),
          networking.startNetwork())
          .withDiskQuotaMB(diskGuard.mechanism() == DiskGuard.Mechanism.QUOTA ? diskSizeMB : 0), daemonBinary));
      daemon.awaitConnected(SandboxDaemon.CONNECT);
      // a member's service is up before it is handed out: a claimed code interpreter has a warm kernel
      startService(image, daemon, containerId, id);
      if (network.isPresent() && network.get().startsOnBridge()) {
        ip = network.get().attach(containerId, () -> io.sandboxes.local.internal.egress.EgressPolicy.DENY_ALL);
      }
      return new WarmPool.Member(id, containerId, templateId, image, daemon, ip);
    } catch (Exception e) {
      if (containerId != null) {
        docker.remove(containerId);
      }
      daemon.delete();
      String gone = ip;
      String goneContainer = containerId;
      network.ifPresent(n -> n.detach(gone, goneContainer));
      throw e;
    }
  }

  private void discardMember(WarmPool.Member m) {
    try {
      docker.remove(m.containerId());
    } catch (RuntimeException e) {
      LOG.warn("removing warm pool member {} failed: {}", m.id(), e.toString());
    }
    m.daemon().delete();
    network.ifPresent(n -> n.detach(m.networkAddress(), m.containerId()));
  }

  /** @return per template with a pool: how many members are ready now, and how many it keeps */
  public Map<String, int[]> poolStatus() {
    return pool.status();
  }

  public Optional<LocalSandbox> find(String id) {
    return Optional.ofNullable(sandboxes.get(id));
  }

  /**
   * Why a sandbox that is gone ended, when it ended without this server ending it (its container
   * was killed, stopped or removed from outside).
   */
  public Optional<String> endedFromOutside(String id) {
    return outside.endedFromOutside(id);
  }

  // ---- containers that die or go away without this server doing it ----

  /** Docker says a container of this server died or was removed: its sandbox is looked at again. */
  private void containerChanged(String containerId) {
    WarmPool p = pool;
    if (p != null) {
      p.containerGone(containerId);
    }
    outside.containerChanged(containerId);
  }

  /**
   * For tests: closes Docker's event stream, as Docker dropping it would, and keeps it closed
   * until the returned handle is closed; then it is opened again and every sandbox looked at.
   *
   * @return closes to let the stream open again
   */
  public AutoCloseable suspendEventsForTesting() {
    return events.suspend();
  }


  /** What one fork came to: the new sandbox, or why it could not be started. */
  public record ForkOutcome(@Nullable LocalSandbox sandbox, @Nullable RpcError error) {}

  /**
   * Forks a running sandbox: its filesystem is captured once ({@code docker commit}, the
   * container frozen for the moment of the copy, as E2B briefly pauses it) and {@code count}
   * sandboxes are started from that copy under new ids. Each fork gets the parent's template id,
   * metadata, environment variables, lifecycle (pause or kill at the deadline, auto-resume),
   * volume mounts and network policy, and a deadline {@code timeout} from now; each diverges from
   * the parent and from the others from then on. Memory and processes are not captured (E2B's
   * forks resume the parent's memory): a fork starts with nothing running. The parent keeps
   * running with its id and deadline untouched.
   *
   * <p>The captured image is kept while any fork made from it exists; the removal of the last
   * removes it.
   *
   * @return one outcome per requested fork, each a sandbox or the error that kept it from starting
   * @throws RpcError not_found when the parent is gone, already_exists (409) when it is paused,
   *     internal when its filesystem could not be captured (then no fork was attempted)
   */
  public List<ForkOutcome> fork(LocalSandbox parent, int count, Duration timeout) throws RpcError {
    if (count < 1 || count > MAX_FORKS) {
      throw new RpcError("invalid_argument", "count must be between 1 and " + MAX_FORKS + ", got " + count);
    }
    String image;
    parent.transitions.lock();
    try {
      if (sandboxes.get(parent.id()) != parent) {
        throw new RpcError("not_found", "Sandbox \"" + parent.id() + "\" doesn't exist or you don't have access to it");
      }
      if (parent.paused()) {
        throw new RpcError("already_exists", "Sandbox '" + parent.id() + "' is paused and cannot be forked; resume it first");
      }
      image = captureForFork(parent);
      forkImages.hold(image);
    } finally {
      parent.transitions.unlock();
    }
    ForkOutcome[] outcomes = new ForkOutcome[count];
    java.util.Arrays.fill(outcomes, new ForkOutcome(null, new RpcError("internal", "the fork could not be started")));
    java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(FORK_PARALLELISM);
    try (java.util.concurrent.ExecutorService starts = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < count; i++) {
        int n = i;
        starts.submit(() -> {
          slots.acquireUninterruptibly();
          try {
            outcomes[n] = startFork(parent, image, timeout);
          } finally {
            slots.release();
          }
        });
      }
    } finally {
      forkImages.unhold(image); // when no fork started, nothing holds it
    }
    List<String> started = new ArrayList<>();
    for (ForkOutcome o : outcomes) {
      if (o.sandbox() != null) {
        started.add(o.sandbox().id());
      }
    }
    parent.log("info", "forked (filesystem only): " + started.size() + " of " + count + " started"
        + (started.isEmpty() ? "" : ": " + String.join(", ", started)));
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.forked").addKeyValue("sandbox", parent.id()).addKeyValue("requested", count)
        .addKeyValue("started", started.size()).log("sandbox forked");
    return List.of(outcomes);
  }

  private ForkOutcome startFork(LocalSandbox parent, String image, Duration timeout) {
    LocalSandbox.Lifecycle from = parent.lifecycle();
    LocalSandbox fork;
    Runnable ended = pool.createBegins(); // a fork's start is a cold create too
    try {
      fork = start(image, image, parent.templateId(), timeout, parent.metadata(), parent.envVars(),
          new LocalSandbox.Lifecycle(from.pauseOnTimeout(), from.autoPauseMemory(), from.autoResume(), timeout.toSeconds()),
          parent.volumeMounts());
    } catch (RpcError e) {
      return new ForkOutcome(null, e);
    } catch (RuntimeException e) {
      LOG.warn("a fork of sandbox {} could not be started: {}", parent.id(), e.toString());
      return new ForkOutcome(null, new RpcError("internal", "the fork could not be started: " + e.getMessage()));
    } finally {
      ended.run();
    }
    ObjectNode policy = parent.network();
    Boolean internet = parent.allowInternetAccess();
    if (policy != null || internet != null) {
      try {
        setNetwork(fork, policy == null ? Json.object() : policy.deepCopy(), internet);
      } catch (RpcError | RuntimeException e) {
        kill(fork.id());
        RpcError why = e instanceof RpcError r ? r : new RpcError("internal", String.valueOf(e.getMessage()));
        return new ForkOutcome(null, new RpcError(why.code(), "the fork's network policy could not be enforced: " + why.getMessage()));
      }
    }
    fork.log("info", "a fork of sandbox " + parent.id() + " (its filesystem; no memory, nothing running)");
    return new ForkOutcome(fork, null);
  }

  /** {@code docker commit} of a sandbox for its forks: an image of this server, no template. */
  private String captureForFork(LocalSandbox parent) throws RpcError {
    Map<String, String> labels = new HashMap<>();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(DockerRuntime.LABEL_SERVER, serverId);
    labels.put(LABEL_FORK_OF, parent.id());
    // what the parent's container carries (its identity, a snapshot's id it was made from) is not the image's
    labels.put(DockerRuntime.LABEL_SANDBOX_ID, "");
    labels.put(DockerRuntime.LABEL_ENVD_TOKEN, "");
    labels.put(Templates.LABEL_SNAPSHOT_ID, "");
    labels.put(LABEL_FORK_IMAGE, "");
    try {
      return docker.client().commitCmd(parent.containerId()).withRepository(FORK_REPOSITORY).withTag(newSandboxId())
          .withLabels(labels).withPause(true).exec();
    } catch (RuntimeException e) {
      throw new RpcError("internal", "capturing sandbox " + parent.id() + " for its forks failed: " + e.getMessage());
    }
  }

  /** @return the sandboxes, newest first */
  public List<LocalSandbox> list() {
    List<LocalSandbox> all = new ArrayList<>(sandboxes.values());
    all.sort(Comparator.comparing(LocalSandbox::startedAt).reversed().thenComparing(LocalSandbox::id));
    return all;
  }

  /** The sandbox whose token signed a pre-signed URL, if any. */
  public Optional<LocalSandbox> bySignature(Predicate<LocalSandbox> signedBy) {
    return sandboxes.values().stream().filter(signedBy).findFirst();
  }

  /** @return false when there was no such sandbox */
  public boolean kill(String id) {
    LocalSandbox s = sandboxes.get(id);
    if (s == null) {
      return false;
    }
    s.transitions.lock();
    try {
      if (sandboxes.remove(id) == null) {
        return false;
      }
      if (s.paused() && s.memoryKept()) {
        try {
          docker.unpause(s.containerId());
        } catch (RuntimeException e) {
          LOG.debug("unpause before removal of {} failed: {}", id, e.toString());
        }
      }
      // streams into the sandbox break off, as E2B's do when a sandbox goes, rather than end
      // with an exit status nobody observed
      s.severProcesses("sandbox " + id + " was killed");
      s.ports().close();
      docker.remove(s.containerId());
      forkImages.sandboxGone(id);
      s.closeDaemon(true);
      network.ifPresent(n -> n.detach(s.networkAddress(), s.containerId()));
      states.forget(id);
      StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.killed").addKeyValue("sandbox", id).log("sandbox killed");
      return true;
    } finally {
      s.transitions.unlock();
    }
  }

  /**
   * Pauses a running sandbox: with {@code memory} the container is frozen, so its processes
   * carry on after resume; without, it is stopped, so only its filesystem is kept.
   *
   * @return false when it was already paused
   */
  public boolean pause(LocalSandbox s, boolean memory) throws RpcError {
    s.transitions.lock();
    try {
      if (!sandboxes.containsKey(s.id())) {
        throw new RpcError("not_found", "Sandbox \"" + s.id() + "\" doesn't exist or you don't have access to it");
      }
      if (s.paused()) {
        return false;
      }
      if (s.frozenFromOutside()) {
        throw new RpcError("failed_precondition", "sandbox " + s.id() + " is frozen from outside this server (its container was paused with"
            + " docker pause): it cannot be paused until it is unpaused (docker unpause)");
      }
      try {
        if (memory) {
          freeze(s);
        } else {
          docker.client().stopContainerCmd(s.containerId()).withTimeout(2).exec();
        }
      } catch (RuntimeException e) {
        throw new RpcError("internal", "pausing sandbox " + s.id() + " failed: " + e.getMessage());
      }
      s.markPaused(memory);
      states.persist(s);
      s.log("info", memory ? "paused with its memory" : "paused, filesystem only");
      StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.paused").addKeyValue("sandbox", s.id()).addKeyValue("memory", memory)
          .log("sandbox paused");
      return true;
    } finally {
      s.transitions.unlock();
    }
  }

  /**
   * {@code docker pause}, tried again a few times: the cgroup freezer gives up ("unable to
   * freeze") when a process is caught mid-fork, which a busy sandbox does all the time.
   */
  private void freeze(LocalSandbox s) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= 5; attempt++) {
      try {
        docker.pause(s.containerId());
        return;
      } catch (RuntimeException e) {
        last = e;
        if (!String.valueOf(e.getMessage()).contains("unable to freeze")) {
          throw e;
        }
        LOG.debug("freezing sandbox {} failed (attempt {}): {}", s.id(), attempt, e.toString());
        try {
          Thread.sleep(100L * attempt);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
    throw last;
  }

  /**
   * Resumes a paused sandbox, or extends a running one's deadline to at least {@code timeout}
   * from now.
   *
   * @return true when it was paused and is now resumed
   */
  public boolean resume(LocalSandbox s, Duration timeout) throws RpcError {
    s.transitions.lock();
    try {
      if (!sandboxes.containsKey(s.id())) {
        throw new RpcError("not_found", "Sandbox \"" + s.id() + "\" doesn't exist or you don't have access to it"
            + stoppedReason(s.id()).map(r -> ": " + r).orElse(""));
      }
      if (!s.paused()) {
        setTimeout(s, timeout, true);
        return false;
      }
      try {
        if (s.memoryKept()) {
          docker.unpause(s.containerId());
        } else {
          DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(s.containerId()).exec());
          networking.reattach(s);
          // its processes did not survive the stop: the template's service starts again
          String image = docker.client().inspectContainerCmd(s.containerId()).exec().getImageId();
          Optional<StartCommand> service = StartCommand.of(docker, image);
          if (service.isPresent()) {
            service.get().run(s.daemon(), s.containerEnv(), s.id());
          }
        }
      } catch (RuntimeException | IOException | java.util.concurrent.TimeoutException e) {
        throw new RpcError("internal", "resuming sandbox " + s.id() + " failed: " + e.getMessage());
      }
      s.markRunning();
      s.endAt(Instant.now().plus(timeout));
      states.persist(s);
      s.log("info", "resumed, ends at " + s.endAt());
      StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.resumed").addKeyValue("sandbox", s.id()).addKeyValue("endAt", s.endAt())
          .log("sandbox resumed");
      return true;
    } finally {
      s.transitions.unlock();
    }
  }

  /** Sets the deadline to now + timeout; with {@code extendOnly} it never moves earlier. */
  public void setTimeout(LocalSandbox s, Duration timeout, boolean extendOnly) {
    Instant end = Instant.now().plus(timeout);
    if (extendOnly && end.isBefore(s.endAt())) {
      return;
    }
    s.endAt(end);
    states.persist(s);
    s.log("info", "timeout set, ends at " + end);
  }

  /** @return whether egress policies can be enforced (otherwise sandboxes have no network at all) */
  public boolean egressEnforced() {
    return networking.egressEnforced();
  }

  /** Stores a sandbox's network policy (a full replace) and enforces it at once. */
  public void setNetwork(LocalSandbox s, com.fasterxml.jackson.databind.node.ObjectNode policy, @Nullable Boolean allowInternetAccess)
      throws RpcError {
    networking.setNetwork(s, policy, allowInternetAccess);
  }

  /**
   * A sandbox's metric samples from {@code start} to {@code end} (Unix seconds, both included),
   * oldest first. When the range reaches the present and the newest sample is older than the
   * sampling interval (a sandbox just made, or many sandboxes to sample), a fresh one is taken
   * first; a paused sandbox gets none while paused.
   */
  public List<Metrics.Sample> metrics(LocalSandbox s, long start, long end) throws RpcError {
    return metrics.metrics(s, start, end);
  }

  private void reap() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        Thread.sleep(Duration.ofMillis(500));
      } catch (InterruptedException e) {
        return;
      }
      Instant now = Instant.now();
      for (LocalSandbox s : List.copyOf(sandboxes.values())) {
        if (s.paused() || s.endAt().isAfter(now)) {
          continue;
        }
        try {
          if (s.lifecycle().pauseOnTimeout()) {
            StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.deadline").addKeyValue("sandbox", s.id())
                .addKeyValue("action", "pause").log("sandbox reached its deadline");
            pause(s, s.lifecycle().autoPauseMemory());
          } else {
            StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.deadline").addKeyValue("sandbox", s.id())
                .addKeyValue("action", "kill").log("sandbox reached its deadline");
            kill(s.id(), "killed at its deadline, " + s.endAt());
          }
        } catch (RpcError | RuntimeException e) {
          LOG.warn("ending expired sandbox {} failed: {}", s.id(), e.getMessage());
        }
      }
    }
  }

  /**
   * Fork images of this server that nothing uses any more are removed: their forks were removed
   * while no server watched, a server stopped between capturing and starting, or the last thing
   * made on top of one (a snapshot of a fork) was just deleted.
   */
  public void sweepForkImages() {
    forkImages.sweep();
  }

  /** Stops the reaper; with {@code killSandboxes} also removes every sandbox this server made. */
  public void close(boolean killSandboxes) {
    pool.close(); // members are nobody's sandboxes: they go whether or not sandboxes are kept
    events.close();
    diskGuard.close();
    metrics.close();
    reaper.interrupt();
    try {
      reaper.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (killSandboxes) {
      for (String id : List.copyOf(sandboxes.keySet())) {
        try {
          kill(id);
        } catch (RuntimeException e) {
          LOG.warn("removing sandbox {} at shutdown failed: {}", id, e.toString());
        }
      }
      SandboxDaemon.deleteTree(stateDir.resolve("envd"));
      SandboxDaemon.deleteTree(stateDir.resolve("envd-bin"));
      try {
        Files.deleteIfExists(stateDir);
      } catch (IOException e) {
        LOG.debug("state folder {} kept: {}", stateDir, e.toString());
      }
    } else {
      // kept sandboxes outlive this server, its listeners do not
      sandboxes.values().forEach(s -> {
        s.ports().close();
        s.closeDaemon(false);
      });
    }
  }

  @Override
  public void close() {
    close(true);
  }
}
