package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to a sandbox once it runs: kill (by a caller, at its deadline, or by the server for
 * a reason later calls are told), pause with or without its memory, resume, a new deadline, and
 * the reaper that pauses or kills sandboxes whose deadline passed. Every transition holds the
 * sandbox's transition lock, so outside-event checks never take this server's own for one.
 */
final class SandboxLifecycle {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  /** How long a sandbox stopped for its disk stays known, so calls for it say why it is gone. */
  static final Duration STOPPED_RETENTION = Duration.ofHours(1);

  private final Map<String, LocalSandbox> sandboxes;
  private final SandboxEngine engine;
  private final StateFiles states;
  private final SandboxNetworking networking;
  private final ForkImages forkImages;
  /** Sandboxes stopped by the server (not by a caller), with why and when, for {@link #STOPPED_RETENTION}. */
  private final ConcurrentMap<String, Stopped> stopped = new ConcurrentHashMap<>();
  private volatile Thread reaper;
  /** Killed sandboxes whose removal is under way in the background: id to its removal. */
  private final ConcurrentMap<String, Removal> removals = new ConcurrentHashMap<>();
  /** How many removals talk to the runtime at once: a kill of many at once is not a flood of removals. */
  private static final int REMOVING_AT_ONCE = 4;
  private final Semaphore removing = new Semaphore(REMOVING_AT_ONCE);
  /** Runs after each removal: a superseded snapshot build a killed sandbox kept may go then. */
  private final Runnable afterRemoval;
  /** The callers' calls under way: a removal waits for a pause in them. */
  private final CallClock calls;
  /** The longest a removal waits for that pause. */
  static final Duration REMOVAL_WAIT = Duration.ofSeconds(5);
  /** The most removals that wait at once; beyond it a removal does not wait. */
  static final int REMOVALS_WAITING = 32;
  private final Semaphore waiting = new Semaphore(REMOVALS_WAITING);

  private record Stopped(String reason, Instant at) {}

  /**
   * A killed sandbox on its way out. Whoever begins it first does it: the background (a few at a
   * time), or a deletion that needs this very container gone (then at once, whatever the
   * background is busy with).
   */
  private static final class Removal {
    final LocalSandbox sandbox;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    final java.util.concurrent.atomic.AtomicBoolean begun = new java.util.concurrent.atomic.AtomicBoolean();
    /** Frozen while its removal waited for a pause in the callers' calls. */
    volatile boolean frozen;

    Removal(LocalSandbox sandbox) {
      this.sandbox = sandbox;
    }
  }

  SandboxLifecycle(Map<String, LocalSandbox> sandboxes, SandboxEngine engine, StateFiles states, SandboxNetworking networking,
      ForkImages forkImages, CallClock calls, Runnable afterRemoval) {
    this.afterRemoval = afterRemoval;
    this.calls = calls;
    this.sandboxes = sandboxes;
    this.engine = engine;
    this.states = states;
    this.networking = networking;
    this.forkImages = forkImages;
  }

  /** Starts the reaper: sandboxes past their deadline are paused or killed, as their lifecycle says. */
  void startReaper() {
    this.reaper = Thread.ofVirtual().name("sandboxes-reaper").start(this::reap);
  }

  /** Stops the reaper, waiting a while for its round to end. */
  void stopReaper() {
    Thread r = reaper;
    if (r == null) {
      return;
    }
    r.interrupt();
    try {
      r.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Why the server stopped a sandbox that is gone, if it did within {@link #STOPPED_RETENTION}.
   *
   * @return the reason, e.g. {@code stopped: its writable layer passed its disk limit of 64 MB}
   */
  Optional<String> stoppedReason(String id) {
    Stopped s = stopped.get(id);
    if (s == null || s.at().plus(STOPPED_RETENTION).isBefore(Instant.now())) {
      return Optional.empty();
    }
    return Optional.of(s.reason());
  }

  /** Kills a sandbox for a reason, which later calls for its id are told (for an hour). */
  boolean kill(String id, String reason) {
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

  /**
   * Kills a sandbox: once this returns it is unreachable (out of the table, so every call for its
   * id is not-found and it is not listed; its process streams broken off, its forwards and its
   * daemon's connection closed, so no call already under way reaches it either) and marked killed
   * in its state file, so a restart removes its container should this server stop before it is
   * removed. The removal itself (the container, its firewall entry, what it kept) finishes in the
   * background ({@link #awaitRemovals}).
   *
   * @return false when there was no such sandbox
   */
  boolean kill(String id) {
    LocalSandbox s = sandboxes.get(id);
    if (s == null) {
      return false;
    }
    Removal removal = new Removal(s);
    boolean taken = false;
    s.transitions.lock();
    try {
      if (sandboxes.remove(id) == null) {
        return false;
      }
      taken = true;
      // counted among the removals under way from the moment it leaves the table: whoever waits
      // for them (a close, a volume's deletion) cannot miss it
      removals.put(id, removal);
      states.markKilled(s);
      // streams into the sandbox break off, as E2B's do when a sandbox goes, rather than end
      // with an exit status nobody observed
      s.severProcesses("sandbox " + id + " was killed");
      s.ports().close();
      s.closeDaemon(true);
      StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.killed").addKeyValue("sandbox", id).log("sandbox killed");
    } finally {
      s.transitions.unlock();
      if (taken) {
        // out of the table: its container goes whatever happened above
        Thread.ofVirtual().name("sandboxes-remove-" + id).start(() -> {
          // first, whatever the removal queue: its address leaves the gateway and the host firewall,
          // whose dispatch then drops what the dying container sends until Docker has removed it
          detachQuietly(s);
          awaitCallsPause(removal);
          removing.acquireUninterruptibly();
          try {
            removeIfNotBegun(removal);
          } finally {
            removing.release();
          }
        });
      }
    }
    return true;
  }

  /**
   * Docker's removal of a running container (its processes killed, its namespaces and mounts torn
   * down) costs about 70 ms of the engine's work, which on a machine of few cores slows the
   * commands of the sandbox a caller creates next several times over. So while callers' calls
   * are under way ({@link CallClock}), and where the engine can freeze the killed sandbox's
   * container cheaply (its cgroup's freezer, from the host: nothing in it runs from then on, nor
   * writes to a volume it shares), its removal waits for a pause in the calls, for at most
   * {@link #REMOVAL_WAIT}. Where it cannot, the removal does not wait: what a killed sandbox runs
   * stops at once. (The runtime's own pause costs about as much work as the removal it would
   * put off.)
   */
  private void awaitCallsPause(Removal r) {
    if (calls.quietInNanos(CallClock.QUIET, System.nanoTime()) <= 0 || r.begun.get() || r.sandbox.paused()
        || !waiting.tryAcquire()) {
      return;
    }
    try {
      if (!engine.freezeCheaply(r.sandbox.instanceId())) {
        return;
      }
      r.frozen = true;
      calls.awaitQuiet(CallClock.QUIET, REMOVAL_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      waiting.release();
    }
  }

  /** Does the removal unless someone else has begun it; then it is over (done or given up). */
  private void removeIfNotBegun(Removal r) {
    if (!r.begun.compareAndSet(false, true)) {
      return;
    }
    try {
      remove(r.sandbox, r.frozen);
    } finally {
      removals.remove(r.sandbox.id(), r);
      r.done.complete(null);
    }
  }

  /**
   * Removes a killed sandbox's container and what it held. A removal that fails every try leaves
   * the state file marked killed: a restart removes the container.
   */
  private void remove(LocalSandbox s, boolean frozen) {
    String id = s.id();
    long t0 = System.nanoTime();
    try {
      if (frozen) {
        engine.thawCheaply(s.instanceId()); // the runtime's removal then finds it as it left it
      }
      if (s.paused() && s.memoryKept()) {
        try {
          engine.thaw(s.instanceId());
        } catch (RuntimeException e) {
          LOG.debug("unpause before removal of {} failed: {}", id, e.toString());
        }
      }
      for (int attempt = 1; ; attempt++) {
        try {
          engine.remove(s.instanceId());
          break;
        } catch (RuntimeException e) {
          if (attempt == 3) {
            LOG.warn("removing the container of killed sandbox {} failed; a restart of this server removes it: {}", id, e.toString());
            return;
          }
          LOG.debug("removing the container of killed sandbox {} failed (attempt {}): {}", id, attempt, e.toString());
          try {
            Thread.sleep(200L * attempt);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
          }
        }
      }
      forkImages.sandboxGone(id);
      detachQuietly(s); // done already unless this removal overtook the background's
      states.forget(id);
    } catch (RuntimeException e) {
      LOG.warn("finishing the removal of killed sandbox {} failed: {}", id, e.toString());
      return;
    }
    StructuredLog.atDebug(LOG).addKeyValue("event", "sandbox.removed").addKeyValue("sandbox", id)
        .addKeyValue("ms", (System.nanoTime() - t0) / 1_000_000).log("killed sandbox removed");
    try {
      afterRemoval.run();
    } catch (RuntimeException e) {
      LOG.debug("after the removal of {}: {}", id, e.toString());
    }
  }

  /** Takes a killed sandbox's address out of the gateway and the host firewall; idempotent. */
  private void detachQuietly(LocalSandbox s) {
    try {
      networking.detach(s);
    } catch (RuntimeException e) {
      LOG.warn("taking killed sandbox {} out of the egress firewall failed: {}", s.id(), e.toString());
    }
  }

  /** Holds back every removal that has not begun talking to the runtime, until the handle is closed. */
  AutoCloseable holdRemovals() {
    removing.acquireUninterruptibly(REMOVING_AT_ONCE);
    java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        removing.release(REMOVING_AT_ONCE);
      }
    };
  }

  /**
   * Waits for the removals of killed sandboxes under way, up to {@code timeout}, without hurrying
   * them.
   *
   * @return how many are still under way (their state files say killed: a restart removes them)
   */
  int awaitRemovals(Duration timeout) {
    awaitAll(List.copyOf(removals.values()), System.nanoTime() + timeout.toNanos());
    return removals.size();
  }

  /**
   * Finishes the removals of the killed sandboxes that {@code held} something (a volume they
   * mounted, the template they were made from), so that thing can go: a removal not yet begun is
   * done here and now, one under way is waited for, up to {@code timeout} in all. Removals of
   * other sandboxes are neither waited for nor overtaken in the queue needlessly.
   */
  void finishRemovalsOf(java.util.function.Predicate<LocalSandbox> held, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<Removal> mine = removals.values().stream().filter(r -> held.test(r.sandbox)).toList();
    for (Removal r : mine) {
      if (System.nanoTime() - deadline >= 0) {
        break;
      }
      removeIfNotBegun(r);
    }
    awaitAll(mine, deadline);
  }

  private static void awaitAll(List<Removal> all, long deadline) {
    for (Removal r : all) {
      try {
        r.done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException e) {
        // ended anyway
      }
    }
  }

  /**
   * Pauses a running sandbox: with {@code memory} the container is frozen, so its processes
   * carry on after resume; without, it is stopped, so only its filesystem is kept.
   *
   * @return false when it was already paused
   */
  boolean pause(LocalSandbox s, boolean memory) throws RpcError {
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
          engine.stop(s.instanceId(), Duration.ofSeconds(2));
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
        engine.freeze(s.instanceId());
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
  boolean resume(LocalSandbox s, Duration timeout) throws RpcError {
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
          engine.thaw(s.instanceId());
        } else {
          engine.restart(s.instanceId());
          networking.reattach(s);
          // its processes did not survive the stop: the template's service starts again
          Optional<StartCommand> service = StartCommand.of(engine, engine.imageOf(s.instanceId()));
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
  void setTimeout(LocalSandbox s, Duration timeout, boolean extendOnly) {
    Instant end = Instant.now().plus(timeout);
    if (extendOnly && end.isBefore(s.endAt())) {
      return;
    }
    s.endAt(end);
    states.persist(s);
    s.log("info", "timeout set, ends at " + end);
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
}
