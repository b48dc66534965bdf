package io.sandboxes.local.internal.runtime;

import org.jspecify.annotations.Nullable;

/**
 * What the runtime shows of a sandbox's instance at one moment.
 *
 * @param gone the instance no longer exists (removed, by this server or from outside)
 * @param running its processes can run (a frozen instance is running too)
 * @param frozen its processes are frozen ({@code docker pause} on Docker)
 * @param removing the runtime is removing it
 * @param outOfMemory it stopped because it ran out of memory
 * @param exitCode how its main process ended, when it stopped and the runtime says
 * @param status the runtime's own word for its state, for logs (e.g. {@code running}, {@code exited})
 * @param phase where it is in its life, as recovery after a restart reads it
 */
public record InstanceState(boolean gone, boolean running, boolean frozen, boolean removing, boolean outOfMemory,
    @Nullable Long exitCode, String status, Phase phase) {

  /** The state of an instance that no longer exists. */
  public static final InstanceState GONE = new InstanceState(true, false, false, false, false, null, "gone", Phase.OTHER);

  /** Where an instance is in its life. */
  public enum Phase {
    /** Its processes run (not frozen). */
    RUNNING,
    /** Its processes are frozen, memory kept. */
    FROZEN,
    /** It does not run, its filesystem kept, and can be started (never started, or ended). */
    STOPPED,
    /** Anything else (being removed, restarting, dead, gone): it cannot be taken back as it is. */
    OTHER
  }

  /** @return whether it runs and is frozen */
  public boolean runningFrozen() {
    return running && frozen;
  }
}
