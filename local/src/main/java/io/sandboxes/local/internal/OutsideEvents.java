package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.runtime.InstanceState;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to sandboxes without this server doing it: a container that dies, is stopped or
 * removed from outside ends its sandbox (and its reason is kept for later lookups); a container
 * frozen from outside ({@code docker pause}) makes calls into its sandbox fail clearly; a daemon
 * connection that drops is checked against the container. Runs on Docker's events, on a resync
 * after the event stream reopens, and when a call into a sandbox waits long.
 */
final class OutsideEvents {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final Map<String, LocalSandbox> sandboxes;
  private final SandboxEngine engine;
  private final StateFiles states;
  private final SandboxNetworking networking;
  private final ForkImages forkImages;
  /** How many ended-from-outside sandboxes keep their reason for a later lookup. */
  private static final int ENDED_KEPT = 1000;
  /** Why sandboxes that ended without this server ending them did, newest last. */
  private final Map<String, String> endedFromOutside = java.util.Collections.synchronizedMap(
      new java.util.LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > ENDED_KEPT;
        }
      });
  /**
   * How long a process whose daemon connection dropped waits to learn whether the sandbox died
   * (a loaded Docker has taken over 2 s to mark a killed container exited).
   */
  private static final Duration LOST_CHECK = Duration.ofSeconds(5);

  OutsideEvents(Map<String, LocalSandbox> sandboxes, SandboxEngine engine, StateFiles states, SandboxNetworking networking,
      ForkImages forkImages) {
    this.sandboxes = sandboxes;
    this.engine = engine;
    this.states = states;
    this.networking = networking;
    this.forkImages = forkImages;
  }

  /** Lets a sandbox's dropped daemon connections and long calls ask whether it ended or froze from outside. */
  void watch(LocalSandbox s) {
    s.onDaemonLost(() -> daemonLost(s));
    s.freeze().lookWith(() -> lookForFreeze(s));
  }

  /** @return why a sandbox that is gone ended, when it ended without this server ending it */
  java.util.Optional<String> endedFromOutside(String id) {
    return java.util.Optional.ofNullable(endedFromOutside.get(id));
  }

  /** Docker says a container of this server died or was removed: its sandbox is looked at again. */
  void containerChanged(String containerId) {
    for (LocalSandbox s : sandboxes.values()) {
      if (s.instanceId().equals(containerId)) {
        Thread.ofVirtual().name("sandboxes-check-" + s.id()).start(() -> verify(s));
        return;
      }
    }
  }

  /**
   * Docker says a container of this server was paused or unpaused: whether its sandbox is frozen
   * from outside is looked at again, once this server's own transition of it (its own pause,
   * resume, snapshot or fork, which pause the container themselves) is over.
   */
  void freezeChanged(String containerId) {
    for (LocalSandbox s : sandboxes.values()) {
      if (s.instanceId().equals(containerId)) {
        Thread.ofVirtual().name("sandboxes-freeze-" + s.id()).start(() -> {
          s.transitions.lock();
          try {
            lookForFreezeLocked(s);
          } finally {
            s.transitions.unlock();
          }
        });
        return;
      }
    }
  }

  /**
   * A call into a sandbox has waited long: whether its container is frozen from outside this
   * server, looked at now unless this server is in a transition of it (then it is not).
   */
  private boolean lookForFreeze(LocalSandbox s) {
    try {
      if (!s.transitions.tryLock(1, java.util.concurrent.TimeUnit.SECONDS)) {
        return false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    try {
      return lookForFreezeLocked(s);
    } finally {
      s.transitions.unlock();
    }
  }

  /** @return whether the container is frozen while this server holds it running; recorded on the sandbox */
  private boolean lookForFreezeLocked(LocalSandbox s) {
    if (sandboxes.get(s.id()) != s) {
      return false;
    }
    try {
      InstanceState state = engine.state(s.instanceId());
      if (state.gone()) {
        return s.frozenFromOutside(); // nothing to look at: what was last seen stands
      }
      return frozenFromOutside(s, state.runningFrozen());
    } catch (RuntimeException e) {
      LOG.debug("could not look whether the container of sandbox {} is frozen: {}", s.id(), e.toString());
      return s.frozenFromOutside(); // could not look: what was last seen stands
    }
  }

  /** How long a freeze Docker shows, and this server did not make, must last to be taken for one from outside. */
  private static final java.time.Duration OUTSIDE_FREEZE_CONFIRM = java.time.Duration.ofSeconds(1);

  /**
   * Records what Docker shows of a sandbox's container; a freeze this server made itself is its
   * pause, not one from outside. A freeze newly seen is looked at again a second later before it
   * counts: Docker records a pause twice (the call, then containerd's event, handled later), so
   * right after this server's own quick pause and resume, a late pause event shows a running
   * container as paused until the unpause event follows (a pause-resume loop was once told its
   * sandbox was frozen from outside).
   */
  private boolean frozenFromOutside(LocalSandbox s, boolean containerFrozen) {
    boolean outside = containerFrozen && !s.paused();
    if (outside && !s.frozenFromOutside()) {
      try {
        Thread.sleep(OUTSIDE_FREEZE_CONFIRM);
        outside = engine.state(s.instanceId()).runningFrozen() && !s.paused();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        outside = false;
      } catch (RuntimeException e) {
        LOG.debug("could not look again whether the container of sandbox {} is frozen: {}", s.id(), e.toString());
        outside = false;
      }
    }
    if (s.freeze().set(outside)) {
      if (outside) {
        s.log("warn", "frozen from outside this server (docker pause): calls into it fail until it is unpaused");
      } else {
        s.log("info", "no longer frozen from outside this server");
      }
      StructuredLog.atWarn(LOG).addKeyValue("event", outside ? "sandbox.frozen-outside" : "sandbox.thawed-outside").addKeyValue("sandbox", s.id())
          .log(outside ? "sandbox frozen from outside this server (docker pause)" : "sandbox no longer frozen from outside this server");
    }
    return outside;
  }

  /** After the event stream is (re)opened: every sandbox is looked at again, in case an event was missed. */
  void resync() {
    for (LocalSandbox s : List.copyOf(sandboxes.values())) {
      Thread.ofVirtual().name("sandboxes-check-" + s.id()).start(() -> verify(s));
    }
  }

  /** What {@link #verify} found. */
  private enum Verdict { FINE, ENDED, BUSY, UNKNOWN }

  private void verify(LocalSandbox s) {
    s.transitions.lock();
    try {
      verifyLocked(s);
    } finally {
      s.transitions.unlock();
    }
  }

  /**
   * Compares a sandbox with its container as Docker shows it now and ends the sandbox when the
   * container is gone, or stopped while this server holds it running; a memory-paused one whose
 * container stopped stays paused, filesystem only ({@link #memoryLost}). Runs under
   * the sandbox's transition lock, so this server's own kill, pause and resume (which stop, freeze
   * and remove the container themselves) are never taken for outside events: a kill has taken the
   * sandbox out of the table first, a filesystem-only pause is recorded before anyone looks.
   */
  private Verdict verifyLocked(LocalSandbox s) {
    if (sandboxes.get(s.id()) != s) {
      return endedFromOutside.containsKey(s.id()) ? Verdict.ENDED : Verdict.FINE;
    }
    String reason;
    try {
      InstanceState state = engine.state(s.instanceId());
      if (state.gone()) {
        reason = "its container was removed from outside this server";
      } else if (state.running()) {
        frozenFromOutside(s, state.frozen());
        return Verdict.FINE; // running, or frozen (Docker reports a frozen container as running too)
      } else if (s.paused() && !s.memoryKept()) {
        return Verdict.FINE; // this server stopped it for a filesystem-only pause
      } else if (s.paused() && !state.removing()) {
        memoryLost(s); // frozen by this server's pause, then stopped (a Docker restart does that): its files are kept
        return Verdict.FINE;
      } else {
        reason = exitReason(state);
      }
    } catch (RuntimeException e) {
      LOG.warn("could not look at the container of sandbox {}: {}", s.id(), e.toString());
      return Verdict.UNKNOWN; // could not look: nothing is concluded
    }
    endFromOutside(s, reason);
    return Verdict.ENDED;
  }

  /** What a paused sandbox's log and its processes' streams say when its pause's memory was lost. */
  static final String MEMORY_LOST = "its container stopped while paused (a Docker restart does that): the memory of its pause is"
      + " lost, its files are kept; it stays paused, and a resume boots it from its files";

  /**
   * A memory-keeping pause whose container stopped (Docker's restart unpauses and stops every
   * container): the sandbox stays paused with only its filesystem, as a filesystem-only pause
   * leaves it; the streams of processes that were frozen end, naming why.
   */
  private void memoryLost(LocalSandbox s) {
    s.markPaused(false);
    s.abandonProcesses(new SandboxProcess.Failure("unavailable", "sandbox " + s.id() + ": " + MEMORY_LOST));
    states.persist(s);
    s.log("warn", MEMORY_LOST);
    StructuredLog.atWarn(LOG).addKeyValue("event", "sandbox.pause-memory-lost").addKeyValue("sandbox", s.id())
        .log("a paused sandbox's container stopped: its memory is lost, its files are kept, and it stays paused");
  }

  private static String exitReason(InstanceState state) {
    if (state.removing()) {
      return "its container was removed from outside this server"; // Docker marks the removal before it kills
    }
    if (state.outOfMemory()) {
      return "its container ran out of memory and stopped";
    }
    Long code = state.exitCode();
    String detail = code == null ? "" : code > 128 && code < 160 ? " (exit code " + code + ", signal " + (code - 128) + ")"
        : " (exit code " + code + ")";
    return "its container stopped without this server stopping it" + detail;
  }

  /**
   * Ends a sandbox whose container died or went away, as a kill would: out of the table, its
   * process streams failed with the reason, its forwards closed, its daemon folder, state file and
   * firewall entry gone, a dead container removed. The caller holds its transition lock.
   */
  private void endFromOutside(LocalSandbox s, String reason) {
    String id = s.id();
    endedFromOutside.put(id, reason);
    sandboxes.remove(id, s);
    s.abandonProcesses(new SandboxProcess.Failure("unavailable", "sandbox " + id + " ended: " + reason));
    s.ports().close();
    try {
      engine.remove(s.instanceId());
      forkImages.sandboxGone(id);
    } catch (RuntimeException e) {
      LOG.warn("removing the dead container of sandbox {} failed: {}", id, e.toString());
    }
    s.closeDaemon(true);
    networking.detach(s);
    states.forget(id);
    s.log("warn", "ended: " + reason);
    StructuredLog.atWarn(LOG).addKeyValue("event", "sandbox.lost").addKeyValue("sandbox", id)
        .addKeyValue("container", s.instanceId().substring(0, Math.min(12, s.instanceId().length())))
        .addKeyValue("reason", reason).log("sandbox ended from outside: " + reason);
  }

  /**
   * A process's daemon connection dropped: whether that is because the sandbox is gone. Looks
   * at the container for up to {@link #LOST_CHECK} (Docker marks a killed container exited a
   * moment after its processes die), giving way to this server's own transitions.
   */
  private boolean daemonLost(LocalSandbox s) {
    long deadline = System.nanoTime() + LOST_CHECK.toNanos();
    while (true) {
      Verdict v = Verdict.BUSY;
      try {
        if (s.transitions.tryLock(50, java.util.concurrent.TimeUnit.MILLISECONDS)) {
          try {
            v = verifyLocked(s);
          } finally {
            s.transitions.unlock();
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      // a sandbox no longer registered was ended by whoever removed it (a kill cuts its streams,
      // an outside end gives them its reason): the process's stream is theirs to end
      if (v == Verdict.ENDED || sandboxes.get(s.id()) != s) {
        return true;
      }
      if (v == Verdict.UNKNOWN || (s.paused() && !s.memoryKept())
          || System.nanoTime() - deadline > 0) {
        return false;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }
}
