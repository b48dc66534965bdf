package io.sandboxes.local.internal;

import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sandbox of the local runtime: its container, its record (template, metadata, token,
 * deadline) and its process table. Every file and process operation happens inside the container,
 * through its in-sandbox daemon, as the requesting user; no sandbox path is ever resolved on the
 * host; port forwarding goes through the daemon too.
 */
public final class LocalSandbox {
  private static final Logger LOG = LoggerFactory.getLogger(LocalSandbox.class);

  /** How long a finished process's end is kept for a late {@code Connect}, as envd does. */
  static final Duration END_RETENTION = Duration.ofSeconds(30);

  private final String id;
  private final String containerId;
  private final String templateId;
  private final String envdToken;
  private final Map<String, String> metadata;
  private final Map<String, String> envVars;
  private final Instant startedAt;
  private final int cpuCount;
  private final int memoryMB;
  private final int diskSizeMB;
  private volatile Instant endAt;
  private final Lifecycle lifecycle;
  private final List<VolumeMount> volumeMounts;
  private volatile boolean paused;
  private volatile boolean memoryKept;
  private volatile boolean pooled;
  final java.util.concurrent.locks.ReentrantLock transitions = new java.util.concurrent.locks.ReentrantLock();
  private final DockerRuntime docker;
  private final ConcurrentMap<Integer, SandboxProcess> processes = new ConcurrentHashMap<>();
  private final FileOps files;
  private final @Nullable SandboxDaemon daemon;
  private final OutsideFreeze freeze;

  /**
   * What happens at the deadline and on traffic to a paused sandbox.
   *
   * @param pauseOnTimeout pause instead of kill at the deadline ({@code autoPause})
   * @param autoPauseMemory whether that pause keeps memory ({@code autoPauseMemory}, default true)
   * @param autoResume whether a request to the paused sandbox's daemon resumes it
   * @param timeoutSeconds the lifetime given at create, used again by an automatic resume
   */
  public record Lifecycle(boolean pauseOnTimeout, boolean autoPauseMemory, boolean autoResume, long timeoutSeconds) {}

  /** A volume mounted into the sandbox. */
  public record VolumeMount(String volumeId, String name, String path) {}

  LocalSandbox(String id, String containerId, String templateId, String envdToken, Map<String, String> metadata,
      Map<String, String> envVars, Instant startedAt, Instant endAt, int cpuCount, int memoryMB, int diskSizeMB, Lifecycle lifecycle,
      List<VolumeMount> volumeMounts, DockerRuntime docker, @Nullable SandboxDaemon daemon) {
    this.daemon = daemon;
    this.id = id;
    this.containerId = containerId;
    this.templateId = templateId;
    this.envdToken = envdToken;
    this.metadata = Map.copyOf(metadata);
    this.envVars = Map.copyOf(envVars);
    this.startedAt = startedAt;
    this.endAt = endAt;
    this.lifecycle = lifecycle;
    this.volumeMounts = List.copyOf(volumeMounts);
    this.cpuCount = cpuCount;
    this.memoryMB = memoryMB;
    this.diskSizeMB = diskSizeMB;
    this.docker = docker;
    this.files = new FileOps(this);
    this.freeze = new OutsideFreeze(id);
  }

  public String id() {
    return id;
  }

  /** @return whether this sandbox was a warm pool member (its identity is in its state file, not its container's labels) */
  public boolean pooled() {
    return pooled;
  }

  void markPooled() {
    this.pooled = true;
  }

  public String containerId() {
    return containerId;
  }

  public String templateId() {
    return templateId;
  }

  public String envdToken() {
    return envdToken;
  }

  public Map<String, String> metadata() {
    return metadata;
  }

  public Map<String, String> envVars() {
    return envVars;
  }

  public Instant startedAt() {
    return startedAt;
  }

  public Instant endAt() {
    return endAt;
  }

  void endAt(Instant endAt) {
    this.endAt = endAt;
  }

  public Lifecycle lifecycle() {
    return lifecycle;
  }

  public List<VolumeMount> volumeMounts() {
    return volumeMounts;
  }

  private volatile com.fasterxml.jackson.databind.node.@Nullable ObjectNode network;
  private volatile @Nullable Boolean allowInternetAccess;
  private volatile @Nullable String networkAddress;

  /** @return the sandbox's address on the egress network, when it is on one */
  public @Nullable String networkAddress() {
    return networkAddress;
  }

  void networkAddress(@Nullable String ip) {
    this.networkAddress = ip;
  }

  /** The policy the egress gateway and firewall enforce: nothing, unless something was allowed. */
  public io.sandboxes.local.internal.egress.EgressPolicy egressPolicy() {
    com.fasterxml.jackson.databind.node.ObjectNode n = network;
    java.util.List<String> allow = new java.util.ArrayList<>();
    java.util.List<String> deny = new java.util.ArrayList<>();
    if (n != null) {
      n.path("allowOut").forEach(e -> allow.add(e.asText()));
      n.path("denyOut").forEach(e -> deny.add(e.asText()));
    }
    return new io.sandboxes.local.internal.egress.EgressPolicy(allow, deny, Boolean.TRUE.equals(allowInternetAccess));
  }

  /** The network policy last set (stored and reported; the egress gateway enforces it). */
  public com.fasterxml.jackson.databind.node.@Nullable ObjectNode network() {
    return network;
  }

  /**
   * The token a request to one of the sandbox's ports must carry ({@code e2b-traffic-access-token}),
   * or null when its port traffic is public: E2B's default, unless it was created with
   * {@code network.allowPublicTraffic: false}. Derived from the envd token (an HMAC of a fixed
   * label under it), so it survives a restart of the server with nothing more stored, and knowing
   * it reveals nothing of the envd token.
   */
  public @Nullable String trafficAccessToken() {
    com.fasterxml.jackson.databind.node.ObjectNode n = network;
    if (n == null || !n.has("allowPublicTraffic") || n.get("allowPublicTraffic").asBoolean(true)) {
      return null;
    }
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(new javax.crypto.spec.SecretKeySpec(envdToken.getBytes(java.nio.charset.StandardCharsets.UTF_8), "HmacSHA256"));
      return java.util.HexFormat.of().formatHex(mac.doFinal("e2b-traffic-access-token".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  public @Nullable Boolean allowInternetAccess() {
    return allowInternetAccess;
  }

  void network(com.fasterxml.jackson.databind.node.@Nullable ObjectNode network, @Nullable Boolean allowInternetAccess) {
    this.network = network;
    this.allowInternetAccess = allowInternetAccess;
  }

  /** One line of the sandbox's own log, as E2B's logs endpoint gives it. */
  public record LogLine(Instant timestamp, String level, String message) {}

  private final java.util.Deque<LogLine> log = new java.util.concurrent.ConcurrentLinkedDeque<>();

  /** Records a lifecycle event in the sandbox's log (the last 1000 are kept). */
  public void log(String level, String message) {
    log.addLast(new LogLine(Instant.now(), level, message));
    while (log.size() > 1000) {
      log.pollFirst();
    }
  }

  /** How many metric samples a sandbox keeps: an hour's worth at one every 5 s. */
  static final int METRICS_KEPT = 720;
  private final java.util.ArrayDeque<Metrics.Sample> samples = new java.util.ArrayDeque<>();
  /** Held while a sample of this sandbox is being taken. */
  final java.util.concurrent.locks.ReentrantLock sampling = new java.util.concurrent.locks.ReentrantLock();

  /** Keeps a metric sample, dropping the oldest beyond {@link #METRICS_KEPT}. */
  synchronized void addSample(Metrics.Sample sample) {
    samples.addLast(sample);
    while (samples.size() > METRICS_KEPT) {
      samples.pollFirst();
    }
  }

  /** @return the newest kept sample, or null when there is none */
  synchronized Metrics.@org.jspecify.annotations.Nullable Sample lastSample() {
    return samples.peekLast();
  }

  /** @return the kept samples taken from {@code start} to {@code end} (Unix seconds, both included), oldest first */
  public synchronized List<Metrics.Sample> samples(long start, long end) {
    return samples.stream().filter(m -> m.at().getEpochSecond() >= start && m.at().getEpochSecond() <= end).toList();
  }

  public List<LogLine> logLines() {
    return List.copyOf(log);
  }

  /** @return whether the sandbox is paused (frozen, or stopped with only its filesystem kept) */
  public boolean paused() {
    return paused;
  }

  /** @return for a paused sandbox, whether its processes and memory are kept */
  public boolean memoryKept() {
    return memoryKept;
  }

  void markPaused(boolean memory) {
    this.paused = true;
    this.memoryKept = memory;
  }

  void markRunning() {
    this.paused = false;
    this.memoryKept = false;
  }

  public int cpuCount() {
    return cpuCount;
  }

  public int memoryMB() {
    return memoryMB;
  }

  /** @return the most its writable layer may hold, in MB (see {@link DiskGuard}) */
  public int diskSizeMB() {
    return diskSizeMB;
  }

  /** Whether this sandbox's container is frozen from outside this server, and calls into it with it. */
  OutsideFreeze freeze() {
    return freeze;
  }

  /** @return whether the container is frozen from outside this server ({@code docker pause} by someone else), as last seen */
  public boolean frozenFromOutside() {
    return freeze.frozen();
  }

  /**
   * Refuses a call into a sandbox frozen from outside this server.
   *
   * @throws RpcError unavailable, saying it is frozen from outside, when it is
   */
  public void checkNotFrozen() throws RpcError {
    freeze.check();
  }

  /**
   * A call into the daemon that fails with a clear error, instead of waiting on, when the
   * container is (or turns out to be) frozen from outside (see {@link OutsideFreeze}).
   *
   * @param orphan gets what the call yields if it finishes after it was given up, to close it
   */
  <T> T viaDaemon(OutsideFreeze.DaemonCall<T> call, java.util.function.@Nullable Consumer<T> orphan) throws RpcError, IOException {
    return freeze.call(daemon(), call, orphan);
  }

  /**
   * The sandbox's daemon connection, waiting a while for it to come (back).
   *
   * @throws RpcError unavailable when the sandbox has no daemon or it did not connect in time, or
   *     is frozen from outside this server
   */
  public io.sandboxes.local.internal.daemon.DaemonConnection daemon() throws RpcError {
    freeze.check();
    if (daemon == null) {
      throw new RpcError("unavailable", "sandbox " + id + " was made without the in-sandbox daemon");
    }
    return daemon.connection();
  }

  /** @return whether the sandbox's daemon is connected at this moment */
  public boolean daemonConnected() {
    return daemon != null && daemon.current() != null;
  }

  /** Stops listening for the daemon; with {@code delete} its folder goes too (the sandbox is gone). */
  void closeDaemon(boolean delete) {
    if (daemon != null) {
      if (delete) {
        daemon.delete();
      } else {
        daemon.close();
      }
    }
  }

  private volatile Map<String, String> proxyVars = Map.of();

  /**
   * Sets the proxy variables naming the running server's egress gateway: every process started
   * from now on gets them over its container environment's (which may name an earlier server's
   * gateway), unless the sandbox's own environment variables set them.
   */
  void proxyVars(Map<String, String> vars) {
    this.proxyVars = Map.copyOf(vars);
  }

  /** Whether {@code name=value} is a proxy variable a server (this one or an earlier) put in. */
  private boolean serverProxyVar(String name, String value) {
    String ours = proxyVars.get(name);
    if (ours == null || envVars.containsKey(name)) {
      return false;
    }
    int port = ours.lastIndexOf(':');
    return value.equals(ours) || (port > 0 && ours.startsWith("http://") && value.startsWith(ours.substring(0, port + 1)));
  }

  /** The environment the container was made with, which the daemon's processes start from. */
  List<String> containerEnv() {
    return daemon == null ? List.of() : daemon.containerEnv(docker, containerId);
  }

  public FileOps files() {
    return files;
  }

  private final ConcurrentMap<String, DirWatch> watchers = new ConcurrentHashMap<>();

  /** Starts a watch of a folder as {@code user}; the caller closes it. */
  public DirWatch watch(String user, String absolutePath, boolean recursive) throws RpcError {
    return DirWatch.start(this, user, absolutePath, recursive);
  }

  /** Starts a polled watch and returns its id. */
  public String addWatcher(String user, String absolutePath, boolean recursive) throws RpcError {
    DirWatch w = watch(user, absolutePath, recursive);
    String id = Registry.newSandboxId();
    watchers.put(id, w);
    return id;
  }

  public @Nullable DirWatch watcher(String id) {
    return watchers.get(id);
  }

  public boolean removeWatcher(String id) {
    DirWatch w = watchers.remove(id);
    if (w != null) {
      w.close();
    }
    return w != null;
  }

  DockerRuntime docker() {
    return docker;
  }

  private final PortForwards forwards = new PortForwards(this);

  /** @return this sandbox's forwarded ports */
  public PortForwards ports() {
    return forwards;
  }

  private RpcError unavailable(Exception e) {
    LOG.warn("a call into sandbox {} failed: {}", id, e.toString());
    return new RpcError("unavailable", "sandbox " + id + " could not be reached: " + e.getMessage());
  }

  /** What {@code Start} asked for. */
  public record StartSpec(String user, String cmd, List<String> args, Map<String, String> envs, @Nullable String cwd,
      @Nullable String tag, boolean pty, int cols, int rows, boolean stdin, Duration timeout) {}

  /**
   * Starts a process and attaches {@code subscriber} before any output is pumped, so the starter
   * sees everything from the first byte.
   */
  public SandboxProcess start(StartSpec spec, SandboxProcess.Subscriber[] subscriberOut) throws RpcError {
    pruneFinished();
    return startByDaemon(spec, subscriberOut);
  }

  /** Starts the process through the sandbox's daemon, in its own session and process group. */
  private SandboxProcess startByDaemon(StartSpec spec, SandboxProcess.Subscriber[] subscriberOut) throws RpcError {
    io.sandboxes.local.internal.daemon.DaemonConnection conn = daemon();
    Map<String, String> env = new java.util.LinkedHashMap<>();
    for (String kv : containerEnv()) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        env.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    proxyVars.forEach((k, v) -> {
      if (!envVars.containsKey(k)) {
        env.put(k, v);
      }
    });
    env.putAll(spec.envs());
    List<String> argv = new ArrayList<>();
    argv.add(spec.cmd());
    argv.addAll(spec.args());
    io.sandboxes.local.internal.daemon.ProcessSpec ps = new io.sandboxes.local.internal.daemon.ProcessSpec(argv, env,
        spec.cwd() == null || spec.cwd().isEmpty() ? null : spec.cwd(), spec.user(), spec.tag(), spec.stdin(),
        spec.pty() ? new io.sandboxes.local.internal.daemon.ProcessSpec.PtySize(spec.cols(), spec.rows()) : null);
    io.sandboxes.local.internal.daemon.DaemonProcess dp;
    try {
      // a start the caller was told failed (the sandbox froze) must not run on once it thaws
      dp = freeze.call(conn, c -> c.start(ps), LocalSandbox::killOrphan);
    } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
      throw switch (e.kind()) {
        case UNKNOWN_USER -> new RpcError("unauthenticated", "invalid user: '" + spec.user() + "'");
        case INVALID -> e.getMessage() != null && e.getMessage().startsWith("cwd")
            ? new RpcError("invalid_argument", "cwd '" + spec.cwd() + "' does not exist or is not a directory")
            : new RpcError("invalid_argument", e.getMessage());
        case NOT_FOUND, PERMISSION -> new RpcError("not_found", "the process could not be started: " + e.getMessage());
        case DISCONNECTED -> unavailable(e);
        case TIMEOUT -> new RpcError("deadline_exceeded", "the process's start was not confirmed: " + e.getMessage());
        case LIMIT -> new RpcError("resource_exhausted", "the process could not be started: " + e.getMessage());
        default -> new RpcError("internal", "the process could not be started: " + e.getMessage());
      };
    } catch (IOException e) {
      throw unavailable(e);
    }
    int pid = (int) dp.pid();
    SandboxProcess process = new SandboxProcess(pid, spec.tag(), spec.cmd(), spec.args(), spec.envs(), spec.cwd(), spec.pty(), dp);
    subscriberOut[0] = process.subscribe();
    processes.put(pid, process);
    Thread.ofVirtual().name("sandboxes-proc-" + id + "-" + pid).start(() -> process.pumpDaemon(lost));
    armDeadline(process, spec.timeout());
    return process;
  }

  /** A process started by a call given up (its sandbox froze from outside meanwhile): killed, and let go. */
  private static void killOrphan(io.sandboxes.local.internal.daemon.DaemonProcess p) {
    try {
      p.signal(9, true);
    } catch (IOException e) {
      LOG.debug("a process started by a call given up could not be killed: {}", e.toString());
    } finally {
      p.close();
    }
  }

  /**
   * envd's Connect-Timeout-Ms on Start: past it the stream fails and the process group is killed.
   * The timer ends with the process, so a finished command leaves no thread (holding the process
   * and its buffers) parked until a deadline that no longer matters.
   */
  private void armDeadline(SandboxProcess process, Duration timeout) {
    if (!timeout.isZero()) {
      Duration t = timeout;
      int pid = process.pid();
      Thread.ofVirtual().name("sandboxes-deadline-" + id + "-" + pid).start(() -> {
        try {
          if (process.awaitEnd(t)) {
            return;
          }
        } catch (InterruptedException e) {
          return;
        }
        if (process.end() == null) {
          process.deliver(new SandboxProcess.Failure("deadline_exceeded", "the process exceeded its deadline of " + t.toMillis() + " ms and was killed"));
          signal(process, 9);
        }
      });
    }
  }

  public void resize(SandboxProcess p, int cols, int rows) throws RpcError {
    try {
      p.daemon().resize(cols, rows);
    } catch (IOException e) {
      throw new RpcError("failed_precondition", "process " + p.pid() + " could not be resized: " + e.getMessage());
    }
  }

  public @Nullable SandboxProcess process(int pid) throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.get(pid);
  }

  public @Nullable SandboxProcess processByTag(String tag) throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.values().stream().filter(p -> tag.equals(p.tag()) && p.end() == null).findFirst().orElse(null);
  }

  /** Breaks off every process stream attached to this sandbox: it is being removed. */
  void severProcesses(String why) {
    processes.values().forEach(p -> p.sever(why));
  }

  /** @return the processes still running */
  public Collection<SandboxProcess> running() throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.values().stream().filter(p -> p.end() == null).toList();
  }

  private volatile java.util.function.BooleanSupplier lost = () -> false;

  /**
   * Sets what a process's pump asks when the daemon's connection drops under it: whether the
   * whole sandbox turned out to be gone (and its streams were told so).
   */
  void onDaemonLost(java.util.function.BooleanSupplier lost) {
    this.lost = lost;
  }

  /** Ends the stream of every process still running with {@code failure}: the sandbox is gone. */
  void abandonProcesses(SandboxProcess.Failure failure) {
    processes.values().forEach(p -> p.abandon(failure));
    watchers.values().forEach(DirWatch::close);
  }

  private volatile boolean processesToTakeBack;
  private final java.util.concurrent.locks.ReentrantLock takingBack = new java.util.concurrent.locks.ReentrantLock();

  /** This sandbox was taken back by a restarted server: its daemon's processes join the table on first use. */
  void processesToTakeBack() {
    this.processesToTakeBack = true;
  }

  /**
   * Attaches to every process the daemon runs that the table does not know (they were started
   * through the server before it restarted), so they are listed, attachable and signalable again.
   */
  private void takeBackProcesses() throws RpcError {
    if (!processesToTakeBack) {
      return;
    }
    takingBack.lock();
    try {
      if (!processesToTakeBack) {
        return;
      }
      io.sandboxes.local.internal.daemon.DaemonConnection conn = daemon();
      java.util.Set<String> inherited = new java.util.HashSet<>(containerEnv());
      try {
        for (io.sandboxes.local.internal.daemon.ProcessInfo info : freeze.call(conn,
            io.sandboxes.local.internal.daemon.DaemonConnection::processes, null)) {
          int pid = (int) info.pid();
          if (processes.containsKey(pid) || info.argv().isEmpty()) {
            continue;
          }
          Map<String, String> envs = new java.util.LinkedHashMap<>();
          for (String kv : info.env()) {
            int eq = kv.indexOf('=');
            // what every process gets from the container is not what the starter asked for
            if (eq > 0 && (!inherited.contains(kv) || envVars.containsKey(kv.substring(0, eq)))
                && !serverProxyVar(kv.substring(0, eq), kv.substring(eq + 1))) {
              envs.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
          }
          io.sandboxes.local.internal.daemon.DaemonProcess dp;
          try {
            dp = freeze.call(conn, c -> c.attach(info.pid()), io.sandboxes.local.internal.daemon.DaemonProcess::close);
          } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
            LOG.debug("process {} of sandbox {} could not be taken back: {}", pid, id, e.toString());
            continue; // it ended meanwhile
          }
          SandboxProcess p = new SandboxProcess(pid, info.tag(), info.argv().get(0), info.argv().subList(1, info.argv().size()),
              envs, info.cwd(), info.pty(), dp);
          processes.put(pid, p);
          Thread.ofVirtual().name("sandboxes-proc-" + id + "-" + pid).start(() -> p.pumpDaemon(lost));
        }
      } catch (IOException e) {
        throw unavailable(e);
      }
      processesToTakeBack = false;
    } finally {
      takingBack.unlock();
    }
  }

  /** Sends a signal to the process's whole group, as root inside the container. */
  public void signal(SandboxProcess p, int signal) {
    try {
      p.daemon().signal(signal, true);
      return;
    } catch (IOException e) {
      LOG.debug("signal {} to the group of pid {} in sandbox {}: {}", signal, p.pid(), id, e.toString());
    }
    try {
      p.daemon().signal(signal, false); // the group is gone, or the leader left it: the process alone
    } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
      if (e.kind() == io.sandboxes.local.internal.daemon.DaemonException.Kind.NOT_FOUND) {
        LOG.debug("signal {} to pid {} in sandbox {}: it had already ended", signal, p.pid(), id);
      } else {
        LOG.warn("signal {} to pid {} in sandbox {} failed: {}", signal, p.pid(), id, e.toString());
      }
    } catch (IOException e) {
      LOG.warn("signal {} to pid {} in sandbox {} failed: {}", signal, p.pid(), id, e.toString());
    }
  }

  private void pruneFinished() {
    long now = System.nanoTime();
    processes.values().removeIf(p -> p.end() != null && now - p.finishedAtNanos() > END_RETENTION.toNanos());
  }
}
