package io.sandboxes;

/**
 * A sandbox's state, as a provider reports it.
 *
 * @since 0.1
 */
public enum SandboxStatus {
  /** Running: commands and files work. */
  RUNNING,
  /** Paused (hibernated): nothing runs; {@link Sandbox#resume()} brings it back. */
  SLEEPING,
  /** Stopped for good. */
  STOPPED
}
