package io.sandboxes;

/**
 * A path inside a sandbox does not exist. The sandbox itself does.
 *
 * @since 0.1
 */
public class SandboxFileNotFoundException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The path that was missing. */
  private final String path;

  /**
   * Creates the exception; its message names the path.
   *
   * @param path the path inside the sandbox
   * @param message the daemon's explanation
   */
  public SandboxFileNotFoundException(String path, String message) {
    super("no such path in sandbox: " + path + " (" + message + ")");
    this.path = path;
  }

  /**
   * Returns the path that was missing.
   *
   * @return the path inside the sandbox, as it was asked for
   */
  public String path() {
    return path;
  }
}
