package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives a claimed pool member's container its sandbox's name ({@code sandboxes-<id>} in place of
 * {@code sandboxes-pool-<id>}), which tells {@code docker ps} and {@code status} that it is
 * claimed. Nothing else depends on the name, and the engine's rename costs it about a millisecond
 * and a half of CPU: in a burst of fifty creates, a seventh of the machine's CPU while the burst's
 * first commands wait for it. So a claim made while other calls of the callers are under way (a
 * burst) is renamed when they pause, {@link #WAIT} after the claim at the latest; a claim made
 * alone (a suite's create, a script's) is renamed at once, so whoever lists containers right
 * after it finds the name. The sandbox's id, hostname and identity do not wait on any of this.
 *
 * <p>Renames still waiting when the server closes keeping its sandboxes are made then ({@link
 * #flush}); one cut short by the server's end is made by the next server's recovery ({@link
 * #renameNow}), which finds a claimed member by its state file whatever its name.
 */
final class ClaimedNames {
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  /** The longest a claimed container's rename waits for a pause in the callers' calls. */
  static final Duration WAIT = Duration.ofSeconds(1);

  private final SandboxEngine engine;
  private final CallClock calls;
  private final Set<Rename> waiting = ConcurrentHashMap.newKeySet();
  private volatile Duration wait = WAIT;

  /** One container's rename; a waiting one is made by whoever takes it out of the waiting set first (its thread, or a flush). */
  private record Rename(String instanceId, String sandboxId, BooleanSupplier wanted) {}

  ClaimedNames(SandboxEngine engine, CallClock calls) {
    this.engine = engine;
    this.calls = calls;
  }

  /**
   * A pool member was claimed (the create doing so counts among the calls under way).
   *
   * @param wanted whether the rename is still wanted when it comes (false once the sandbox is killed)
   */
  void claimed(String instanceId, String sandboxId, BooleanSupplier wanted) {
    Rename r = new Rename(instanceId, sandboxId, wanted);
    boolean alone = calls.underWay() <= 1;
    if (!alone) {
      waiting.add(r);
    }
    Thread.ofVirtual().name("sandboxes-rename-" + sandboxId).start(() -> {
      try {
        if (!alone) {
          calls.awaitQuiet(CallClock.QUIET, wait);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        if (alone || waiting.remove(r)) {
          make(r);
        }
      }
    });
  }

  /** The renames still waiting are made now: the server closes, and its sandboxes may outlive it. */
  void flush() {
    for (Rename r : List.copyOf(waiting)) {
      if (waiting.remove(r)) {
        make(r);
      }
    }
  }

  /** A claimed member's container found under its pool name (its server ended before the rename) takes its name now. */
  void renameNow(String instanceId, String sandboxId) {
    make(new Rename(instanceId, sandboxId, () -> true));
  }

  /** @return how many renames wait for the callers' calls to pause (for tests) */
  int waiting() {
    return waiting.size();
  }

  /** For tests: the longest later claims' renames wait, in place of {@link #WAIT}. */
  void waitForTesting(Duration longest) {
    this.wait = longest;
  }

  private void make(Rename r) {
    if (!r.wanted().getAsBoolean()) {
      return;
    }
    String name = "sandboxes-" + r.sandboxId();
    try {
      engine.rename(r.instanceId(), name);
    } catch (RuntimeException e) {
      LOG.debug("renaming claimed container {} to {} failed: {}", r.instanceId(), name, e.toString());
    }
  }
}
