package io.sandboxes.local.internal;

/**
 * Whether process and file calls go to the in-sandbox daemon instead of {@code docker exec}:
 * the system property {@code sandboxes.local.daemon} ({@code true} or {@code false}).
 */
public final class DaemonSwitch {
  /** The system property that turns the daemon path on. */
  public static final String PROPERTY = "sandboxes.local.daemon";

  private DaemonSwitch() {}

  /** @return whether calls go to the in-sandbox daemon */
  public static boolean on() {
    return Boolean.parseBoolean(System.getProperty(PROPERTY, "false"));
  }
}
