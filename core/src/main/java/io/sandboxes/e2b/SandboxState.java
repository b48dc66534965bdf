package io.sandboxes.e2b;

/**
 * The state the control plane reports for a sandbox.
 *
 * @since 0.1
 */
public enum SandboxState {
  /** Running: processes run and the daemon answers. */
  RUNNING,
  /** Paused: nothing runs; a connect resumes it. */
  PAUSED;

  /** @return the wire name, {@code running} or {@code paused} */
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  static SandboxState fromWire(String value) {
    return switch (value) {
      case "running" -> RUNNING;
      case "paused" -> PAUSED;
      default -> throw new IllegalArgumentException("unknown sandbox state '" + value + "'");
    };
  }
}
