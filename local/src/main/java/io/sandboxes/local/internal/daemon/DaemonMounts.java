package io.sandboxes.local.internal.daemon;

/**
 * Where a sandbox sees its daemon: the socket folder and the binary (how they get there is the
 * runtime's: bind mounts on Docker, see {@code DaemonInjection}).
 */
public final class DaemonMounts {
  /** Where the sandbox sees its socket folder. */
  public static final String SOCKET_DIR = "/run/sandboxes";
  /** Where the sandbox sees the daemon binary. */
  public static final String BINARY = "/run/sandboxes-bin/envd";
  /** The socket as the daemon connects to it. */
  public static final String SOCKET = SOCKET_DIR + "/" + DaemonListener.SOCKET_NAME;

  private DaemonMounts() {}
}
