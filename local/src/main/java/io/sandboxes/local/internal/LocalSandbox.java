package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.SandboxEngine;
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
  private final String instanceId;
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
  /** Held while its state file is written ({@link StateFiles}). */
  final Object stateWrites = new Object();
  private volatile boolean killed;
  private final SandboxEngine engine;
  private final SandboxProcesses processes;
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

  LocalSandbox(String id, String instanceId, String templateId, String envdToken, Map<String, String> metadata,
      Map<String, String> envVars, Instant startedAt, Instant endAt, int cpuCount, int memoryMB, int diskSizeMB, Lifecycle lifecycle,
      List<VolumeMount> volumeMounts, SandboxEngine engine, @Nullable SandboxDaemon daemon) {
    this.daemon = daemon;
    this.id = id;
    this.instanceId = instanceId;
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
    this.engine = engine;
    this.files = new FileOps(this);
    this.freeze = new OutsideFreeze(id);
    this.processes = new SandboxProcesses(this, freeze);
  }

  public String id() {
    return id;
  }

  /** For tests: keeps a finished process's end (for a late connect by pid) this long instead of {@link #END_RETENTION}. */
  public void processEndRetentionForTesting(Duration retention) {
    processes.retentionForTesting(retention);
  }

  /** @return whether this sandbox was a warm pool member (its identity is in its state file, not its container's labels) */
  public boolean pooled() {
    return pooled;
  }

  /** @return whether it was killed: unreachable, its removal under way or over */
  boolean killed() {
    return killed;
  }

  void markKilled() {
    this.killed = true;
  }

  void markPooled() {
    this.pooled = true;
  }

  public String instanceId() {
    return instanceId;
  }

  private volatile @Nullable String reportedTemplateId;

  /** Sets the id clients are told for the template (a built template's id, when created from its name). */
  void reportTemplateAs(String id) {
    this.reportedTemplateId = id;
  }

  /**
   * @return the template id clients are told, as E2B reports it: a built template's id when the
   *     sandbox was created from its name ({@link #templateId()}, its alias then)
   */
  public String reportedTemplateId() {
    String r = reportedTemplateId;
    return r == null ? templateId : r;
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

  private volatile @Nullable NetworkPolicy network;
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
    NetworkPolicy n = network;
    java.util.List<String> allow = n == null || n.allowOut() == null ? java.util.List.of() : n.allowOut();
    java.util.List<String> deny = n == null || n.denyOut() == null ? java.util.List.of() : n.denyOut();
    NetworkPolicy.EgressProxySetting p = n == null ? null : n.egressProxy();
    return new io.sandboxes.local.internal.egress.EgressPolicy(allow, deny, Boolean.TRUE.equals(allowInternetAccess),
        n == null ? io.sandboxes.local.internal.egress.HeaderRules.NONE : n.headerRules(),
        p == null ? null : io.sandboxes.local.internal.egress.UpstreamProxy.socks5(p.address(), p.username(), p.password()));
  }

  /** The network policy last set (stored and reported; the egress gateway enforces it). */
  public @Nullable NetworkPolicy network() {
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
    NetworkPolicy n = network;
    if (n == null || !Boolean.FALSE.equals(n.allowPublicTraffic())) {
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

  void network(@Nullable NetworkPolicy network, @Nullable Boolean allowInternetAccess) {
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

  /** The daemon's connection at this moment, without waiting for one; null when none is connected. */
  io.sandboxes.local.internal.daemon.@Nullable DaemonConnection daemonNow() {
    return daemon == null ? null : daemon.current();
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

  /** @return the proxy variables naming the running server's egress gateway */
  Map<String, String> proxyVars() {
    return proxyVars;
  }

  /** Whether {@code name=value} is a proxy variable a server (this one or an earlier) put in. */
  boolean serverProxyVar(String name, String value) {
    String ours = proxyVars.get(name);
    if (ours == null || envVars.containsKey(name)) {
      return false;
    }
    int port = ours.lastIndexOf(':');
    return value.equals(ours) || (port > 0 && ours.startsWith("http://") && value.startsWith(ours.substring(0, port + 1)));
  }

  /**
   * E2B's identity variables, which its envd gives every process: {@code E2B_SANDBOX=true}, the
   * sandbox's id and its template's id. Read at each start, so a warm pool member has its claimed
   * identity, never the pool's.
   */
  Map<String, String> identityVars() {
    return Map.of("E2B_SANDBOX", "true", "E2B_SANDBOX_ID", id, "E2B_TEMPLATE_ID", reportedTemplateId());
  }

  /** The environment the container was made with, which the daemon's processes start from. */
  List<String> containerEnv() {
    return daemon == null ? List.of() : daemon.containerEnv(engine, instanceId);
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

  private final PortForwards forwards = new PortForwards(this);

  /** @return this sandbox's forwarded ports */
  public PortForwards ports() {
    return forwards;
  }

  /** What {@code Start} asked for. */
  public record StartSpec(String user, String cmd, List<String> args, Map<String, String> envs, @Nullable String cwd,
      @Nullable String tag, boolean pty, int cols, int rows, boolean stdin, Duration timeout) {}

  /**
   * Starts a process and attaches {@code subscriber} before any output is pumped, so the starter
   * sees everything from the first byte.
   */
  public SandboxProcess start(StartSpec spec, SandboxProcess.Subscriber[] subscriberOut) throws RpcError {
    return processes.start(spec, subscriberOut);
  }

  public void resize(SandboxProcess p, int cols, int rows) throws RpcError {
    processes.resize(p, cols, rows);
  }

  public @Nullable SandboxProcess process(int pid) throws RpcError {
    return processes.process(pid);
  }

  public @Nullable SandboxProcess processByTag(String tag) throws RpcError {
    return processes.processByTag(tag);
  }

  /** @return the processes still running */
  public Collection<SandboxProcess> running() throws RpcError {
    return processes.running();
  }

  /** Sends a signal to the process's whole group, as root inside the container. */
  public void signal(SandboxProcess p, int signal) {
    processes.signal(p, signal);
  }

  /** Breaks off every process stream attached to this sandbox: it is being removed. */
  void severProcesses(String why) {
    processes.sever(why);
  }

  /**
   * Sets what a process's pump asks when the daemon's connection drops under it: whether the
   * whole sandbox turned out to be gone (and its streams were told so).
   */
  void onDaemonLost(java.util.function.BooleanSupplier lost) {
    processes.onDaemonLost(lost);
  }

  /**
   * Asked when the daemon's connection dropped under a stream: whether the whole sandbox turned
   * out to be gone (killed, or ended from outside), as {@link #onDaemonLost} decides; false until set.
   */
  boolean endedUnderItsDaemon() {
    return processes.daemonLost();
  }

  /** Ends the stream of every process still running with {@code failure}: the sandbox is gone. */
  void abandonProcesses(SandboxProcess.Failure failure) {
    processes.abandon(failure);
    watchers.values().forEach(DirWatch::close);
  }

  /** This sandbox was taken back by a restarted server: its daemon's processes join the table on first use. */
  void processesToTakeBack() {
    processes.takeBackLater();
  }
}
