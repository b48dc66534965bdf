package io.sandboxes;

/**
 * A sandbox's state, in E2B's words. One enum for every API: a live handle's
 * {@link Sandbox#status()}, a {@link SandboxInfo}'s state, and listing filters.
 *
 * @since 0.1
 */
public enum SandboxState {
  /** Running: processes run and the daemon answers. */
  RUNNING,
  /**
   * Paused: nothing runs and the daemon does not answer; {@link Sandbox#resume()} (or connecting
   * to it) brings it back. The provider contract's "sleeping".
   */
  PAUSED,
  /** Killed: gone for good. A listing never shows it; a handle that killed its sandbox does. */
  KILLED
}
