package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.InstanceEvents;
import io.sandboxes.local.internal.runtime.DiskLimits;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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
 * The local runtime's sandboxes: the table of live sandboxes, and the entry point the HTTP layer
 * and the server call. Each responsibility lives in its own collaborator, which this class wires
 * together and delegates to:
 *
 * <ul>
 *   <li>{@link SandboxStarts}: cold starts from an image, warm pool members, a claimed member's identity;
 *   <li>{@link SandboxLifecycle}: kill, pause, resume, deadlines and the reaper;
 *   <li>{@link Forks} and {@link ForkImages}: forks and the captured filesystems they start from;
 *   <li>{@link SandboxNetworking}: the network a sandbox starts on, joins, and the policy it is held to;
 *   <li>{@link OutsideEvents}: containers that die, vanish or freeze without this server doing it;
 *   <li>{@link StateFiles} and {@link SandboxRecovery}: the state kept across restarts, and taking
 *       sandboxes back after one;
 *   <li>{@link MetricsSampler}: resource use over time.
 * </ul>
 *
 * <p>Immutable facts about a sandbox live in its container's labels; the facts that change (its
 * deadline, whether and how it is paused) live in a small JSON file per sandbox in the server's
 * state folder. A restarted server finds its sandboxes again from both.
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
  static final String LABEL_DISK = "io.sandboxes.disk-mb";
  public static final long PIDS_LIMIT = 1024;
  public static final String ENVD_VERSION = "0.6.13";
  static final String LABEL_LIFECYCLE = "io.sandboxes.lifecycle";
  static final String LABEL_VOLUMES = "io.sandboxes.volumes";
  /** On a fork's container: the image of its parent's filesystem it was made from; empty on others. */
  static final String LABEL_FORK_IMAGE = "io.sandboxes.fork-image";
  /** On a captured fork image: the sandbox it is the filesystem of. */
  static final String LABEL_FORK_OF = "io.sandboxes.fork-of";
  /** The most forks one request may ask for, as E2B allows. */
  public static final int MAX_FORKS = 100;

  private final Templates templates;
  private final Path stateDir;
  private final SandboxEngine engine;
  private final StateFiles states;
  private final SandboxNetworking networking;
  private final OutsideEvents outside;
  private final ConcurrentMap<String, LocalSandbox> sandboxes = new ConcurrentHashMap<>();
  private final MetricsSampler metrics;
  private final InstanceEvents.Subscription events;
  private final int diskSizeMB;
  private final DiskGuard diskGuard;
  private final SandboxLifecycle lifecycle;
  private final TrafficWake trafficWake = new TrafficWake(this);
  private final ForkImages forkImages;
  private final SandboxStarts starts;
  private final WarmPool pool;
  private final int warmPoolMax;
  /** The callers' calls under way: refills and removals give way to them. */
  private final CallClock calls = new CallClock();
  /** Claimed pool members' containers on their way to their sandboxes' names. */
  private final ClaimedNames names;
  private final Forks forks;

  /**
   * @param engine the runtime sandboxes run on
   * @param templates template id to image reference
   * @param serverId whose sandboxes these are: a restarted server with the same id takes them back
   * @param stateDir where the changing state of each sandbox is kept
   * @param diskSizeMB each sandbox's disk limit
   * @param warmPool template id to how many pre-started members it keeps ready at least (0: none)
   * @param warmPoolMax the most members a template's pool grows to with demand; null: as many as a
   *     share of the engine's memory holds (16 to 64, see {@code WarmPool.defaultMax})
   */
  public Registry(SandboxEngine engine, Templates templates, String serverId, Path stateDir,
      java.util.Optional<io.sandboxes.local.internal.egress.SandboxNetwork> network, int diskSizeMB, Map<String, Integer> warmPool,
      @Nullable Integer warmPoolMax) {
    this.diskSizeMB = diskSizeMB;
    this.names = new ClaimedNames(engine, calls);
    this.templates = templates;
    this.stateDir = stateDir;
    this.engine = engine;
    this.states = new StateFiles(stateDir);
    this.networking = new SandboxNetworking(network, states);
    this.forkImages = new ForkImages(engine, serverId);
    this.outside = new OutsideEvents(sandboxes, engine, states, networking, forkImages);
    new SandboxRecovery(sandboxes, engine, serverId, states, networking, outside, forkImages, diskSizeMB, names).recover();
    // a superseded snapshot build, or an untagged template build, the sandbox kept can go now that its container has
    this.lifecycle = new SandboxLifecycle(sandboxes, engine, states, networking, forkImages, calls, templates::sandboxRemoved);
    this.diskGuard = DiskGuard.start(engine.diskLimits(), templates.resolve("base"), serverId,
        () -> List.copyOf(sandboxes.values()), (s, reason) -> kill(s.id(), reason));
    this.starts = new SandboxStarts(sandboxes, engine, templates, serverId, states, networking, outside, forkImages,
        diskGuard.mechanism(), diskSizeMB, names);
    this.warmPoolMax = warmPoolMax != null ? warmPoolMax : WarmPool.defaultMax(engine.memoryBytes());
    this.pool = new WarmPool(warmPool, this.warmPoolMax, calls, new WarmPool.Maker() {
      @Override
      public WarmPool.Member start(String templateId) throws Exception {
        return starts.startMember(templateId);
      }

      @Override
      public void discard(WarmPool.Member m) {
        starts.discardMember(m);
      }
    });
    this.forks = new Forks(sandboxes, engine, serverId, forkImages, pool, starts, networking, lifecycle);
    lifecycle.startReaper();
    this.metrics = new MetricsSampler(sandboxes, engine);
    this.events = engine.follow(serverId, new InstanceEvents() {
      @Override
      public void ended(String instanceId) {
        containerChanged(instanceId);
      }

      @Override
      public void freezeChanged(String instanceId) {
        outside.freezeChanged(instanceId);
      }

      @Override
      public void resync() {
        outside.resync();
      }
    });
  }

  /** @return how sandboxes' disk limits are held on this engine */
  public DiskLimits.Mechanism diskLimitMechanism() {
    return diskGuard.mechanism();
  }

  /**
   * Why the server stopped a sandbox that is gone, if it did within an hour.
   *
   * @return the reason, e.g. {@code stopped: its writable layer passed its disk limit of 64 MB}
   */
  public Optional<String> stoppedReason(String id) {
    return lifecycle.stoppedReason(id);
  }

  /** @return each sandbox's disk limit, in MiB: what its writable layer may hold */
  public int diskSizeMB() {
    return diskSizeMB;
  }

  /** Kills a sandbox for a reason, which later calls for its id are told (for an hour). */
  public boolean kill(String id, String reason) {
    return lifecycle.kill(id, reason);
  }

  public static String newSandboxId() {
    return io.sandboxes.local.internal.common.Ids.newSandboxId();
  }

  /** @return a fresh access token (24 random bytes in hex) */
  public static String newToken() {
    return io.sandboxes.local.internal.common.Ids.newToken();
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
    Runnable call = calls.begin();
    try {
      if (mounts.isEmpty()) {
        // volumes are mounted at container create: a sandbox with mounts always starts cold
        WarmPool.Member m;
        while ((m = pool.claim(templateId)) != null) {
          LocalSandbox claimed = starts.claim(m, image, templateId, timeout, metadata, envVars, lifecycle);
          if (claimed != null) {
            return claimed;
          }
        }
      }
      return starts.start(image, "", templateId, timeout, metadata, envVars, lifecycle, mounts);
    } finally {
      call.run();
      ended.run();
    }
  }

  /**
   * A call for a sandbox (a command, a file) begins: a killed sandbox's removal and the refills of
   * a well-stocked warm pool give way to it ({@link CallClock}).
   *
   * @return ends it; idempotent
   */
  public Runnable callBegins() {
    return calls.begin();
  }

  /** For tests: @return how many claimed containers' renames wait for the callers' calls to pause */
  public int renamesWaitingForTesting() {
    return names.waiting();
  }

  /** For tests: the longest later claims' renames wait for a pause in the callers' calls (1 s unless set). */
  public void renameWaitForTesting(Duration longest) {
    names.waitForTesting(longest);
  }

  /** For tests: @return how many callers' calls are under way now, as background work sees them */
  public int callsUnderWayForTesting() {
    return calls.underWay();
  }

  /** @return the most members a template's pool grows to with demand: the one given, or the default the engine's memory allows */
  public int warmPoolMax() {
    return warmPoolMax;
  }

  /** @return per template with a pool: how many members are ready now, and how many it aims to keep (its target) */
  public Map<String, int[]> poolStatus() {
    return pool.status();
  }

  /** For tests: shortens how far back creates count as demand and the quiet before a pool's surplus goes. */
  public void warmPoolPeriodsForTesting(Duration demandWindow, Duration surplusAfter) {
    pool.periodsForTesting(demandWindow, surplusAfter);
  }

  /** For tests: @return the most warm pool members that were being started at the same moment so far */
  public int warmPoolPeakParallelStartsForTesting() {
    return pool.peakParallelStarts();
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

  /** The runtime says an instance of this server ended or was removed: its sandbox is looked at again. */
  private void containerChanged(String containerId) {
    WarmPool p = pool;
    if (p != null) {
      p.containerGone(containerId);
    }
    outside.containerChanged(containerId);
  }

  /**
   * For tests: closes the runtime's event stream, as the runtime dropping it would, and keeps it closed
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
    return forks.fork(parent, count, timeout);
  }

  /** @return the sandboxes, newest first */
  public List<LocalSandbox> list() {
    List<LocalSandbox> all = new ArrayList<>(sandboxes.values());
    all.sort(Comparator.comparing(LocalSandbox::startedAt).reversed().thenComparing(LocalSandbox::id));
    return all;
  }

  /** How long a deletion waits for the removals of killed sandboxes that held what it deletes. */
  static final Duration REMOVALS_BEFORE_DELETE = Duration.ofSeconds(50);

  /**
   * The sandboxes, once the killed ones that {@code held} what a deletion is about to delete (a
   * volume they mounted, a template they were made from) are removed: a container whose kill has
   * answered holds what it used until it is gone. Their removals are done now if the background
   * has not begun them; up to {@link #REMOVALS_BEFORE_DELETE} in all.
   *
   * @return the sandboxes, newest first
   */
  public List<LocalSandbox> listOnceRemoved(Predicate<LocalSandbox> held) {
    lifecycle.finishRemovalsOf(held, REMOVALS_BEFORE_DELETE);
    return list();
  }

  /** Whether a sandbox was made from a template that can be deleted (any but the base image). */
  public static boolean madeFromATemplate(LocalSandbox s) {
    return !Templates.canonical(s.templateId()).equals(Templates.canonical(Templates.BASE));
  }

  /** The sandbox whose token signed a pre-signed URL, if any. */
  public Optional<LocalSandbox> bySignature(Predicate<LocalSandbox> signedBy) {
    return sandboxes.values().stream().filter(signedBy).findFirst();
  }

  /** @return false when there was no such sandbox */
  public boolean kill(String id) {
    Runnable ended = calls.begin(); // a caller's kill: the next create and its commands often follow at once
    try {
      return lifecycle.kill(id);
    } finally {
      ended.run();
    }
  }

  /**
   * Tells every sandbox taken back at start the template id clients are to be told (a built
   * template's id, for one created from its name), once the built templates can be looked up.
   */
  public void reportTemplateIds() {
    for (LocalSandbox s : sandboxes.values()) {
      s.reportTemplateAs(templates.reportedId(s.templateId()));
    }
  }

  /**
   * Pauses a running sandbox: with {@code memory} the container is frozen, so its processes
   * carry on after resume; without, it is stopped, so only its filesystem is kept.
   *
   * @return false when it was already paused
   */
  public boolean pause(LocalSandbox s, boolean memory) throws RpcError {
    return lifecycle.pause(s, memory);
  }

  /**
   * Resumes a paused sandbox, or extends a running one's deadline to at least {@code timeout}
   * from now.
   *
   * @return true when it was paused and is now resumed
   */
  public boolean resume(LocalSandbox s, Duration timeout) throws RpcError {
    return lifecycle.resume(s, timeout);
  }

  /** How traffic to a paused sandbox wakes it: one resume at a time per sandbox, a bounded number waiting for it. */
  public TrafficWake trafficWake() {
    return trafficWake;
  }

  /** Sets the deadline to now + timeout; with {@code extendOnly} it never moves earlier. */
  public void setTimeout(LocalSandbox s, Duration timeout, boolean extendOnly) {
    lifecycle.setTimeout(s, timeout, extendOnly);
  }

  /** @return whether egress policies can be enforced (otherwise sandboxes have no network at all) */
  public boolean egressEnforced() {
    return networking.egressEnforced();
  }

  /**
   * Why a sandbox under {@code policy} may not tunnel its egress through {@code proxy}, or null
   * when it may ({@link io.sandboxes.local.internal.egress.SandboxNetwork#proxyRefusal}).
   */
  public @Nullable String egressProxyRefusal(io.sandboxes.local.internal.egress.UpstreamProxy proxy,
      io.sandboxes.local.internal.egress.EgressPolicy policy) {
    // not map(): a proxy it may use is null, which map would turn into "no network"
    return networking.network().isPresent() ? networking.network().get().proxyRefusal(proxy, policy)
        : "this server cannot enforce egress, and its sandboxes have no network at all";
  }

  /** Stores a sandbox's network policy (a full replace) and enforces it at once. */
  public void setNetwork(LocalSandbox s, NetworkPolicy policy, @Nullable Boolean allowInternetAccess)
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

  /**
   * Fork images of this server that nothing uses any more are removed: their forks were removed
   * while no server watched, a server stopped between capturing and starting, or the last thing
   * made on top of one (a snapshot of a fork) was just deleted.
   */
  public void sweepForkImages() {
    forkImages.sweep();
  }

  /** How long closing waits for the removals of killed sandboxes, unless a test says otherwise. */
  static final Duration REMOVALS_AT_CLOSE = Duration.ofSeconds(60);
  private volatile Duration removalsAtClose = REMOVALS_AT_CLOSE;

  /**
   * For tests: the removals of killed sandboxes wait (kills still answer) until the returned
   * handle is closed; and closing this registry waits only {@code atClose} for them, handing on
   * those left (a server started again with this id removes them), as a server stopped mid-removal does.
   *
   * @return closes to let the removals go on
   */
  public AutoCloseable holdRemovalsForTesting(Duration atClose) {
    removalsAtClose = atClose;
    return lifecycle.holdRemovals();
  }

  /** Stops the reaper; with {@code killSandboxes} also removes every sandbox this server made. */
  public void close(boolean killSandboxes) {
    pool.close(); // members are nobody's sandboxes: they go whether or not sandboxes are kept
    events.close();
    diskGuard.close();
    metrics.close();
    lifecycle.stopReaper();
    if (killSandboxes) {
      for (String id : List.copyOf(sandboxes.keySet())) {
        try {
          lifecycle.kill(id); // not a caller's call: the removals need not wait for a pause
        } catch (RuntimeException e) {
          LOG.warn("removing sandbox {} at shutdown failed: {}", id, e.toString());
        }
      }
    }
    names.flush(); // kept sandboxes leave with their names; a killed one's is no longer wanted
    // killed sandboxes' removals finish before the engine's client closes; one that does not in
    // time is handed on: its state file says killed, and a restart with this id removes it
    Duration wait = removalsAtClose;
    int left = lifecycle.awaitRemovals(wait);
    if (left > 0) {
      LOG.warn("{} killed sandboxes were not removed within {} ms; a server started with this id removes them", left,
          wait.toMillis());
    }
    if (killSandboxes) {
      if (left == 0) {
        engine.discardDaemons();
      }
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
