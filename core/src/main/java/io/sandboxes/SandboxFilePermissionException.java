package io.sandboxes;

/**
 * The sandbox refused a file operation for want of permission: the user the call ran as may not
 * read, write, list or change that path. The sandbox and (usually) the path exist. It carries the
 * Connect code {@code permission_denied}, whether the daemon answered through an RPC or with HTTP
 * 403 on its file transfer endpoint.
 *
 * @since 0.1
 */
public class SandboxFilePermissionException extends SandboxRpcException {
  private static final long serialVersionUID = 1L;

  /** The path that was refused. */
  private final String path;

  /**
   * Creates the exception; its message names the path, what was attempted and the daemon's words.
   *
   * @param path the path inside the sandbox, as it was asked for
   * @param message the daemon's explanation
   * @param context what was being attempted
   */
  public SandboxFilePermissionException(String path, String message, String context) {
    super("permission_denied", "permission denied on " + path + " (" + message + ")", context);
    this.path = path;
  }

  /**
   * Returns the path that was refused.
   *
   * @return the path inside the sandbox, as it was asked for
   */
  public String path() {
    return path;
  }
}
