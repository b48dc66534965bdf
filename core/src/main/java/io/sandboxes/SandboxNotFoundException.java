package io.sandboxes;

/**
 * The sandbox positively does not exist (or is not visible to this key): the server said so.
 * Never thrown for "could not find out"; that is a plain {@link SandboxException}.
 *
 * @since 0.1
 */
public class SandboxNotFoundException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The id that was looked up. */
  private final String sandboxId;

  /**
   * Creates the exception; its message names the sandbox.
   *
   * @param sandboxId the sandbox that was looked up
   * @param message the server's explanation
   */
  public SandboxNotFoundException(String sandboxId, String message) {
    super("sandbox " + sandboxId + " not found: " + message);
    this.sandboxId = sandboxId;
  }

  /**
   * Returns the id that was looked up.
   *
   * @return the sandbox's id
   */
  public String sandboxId() {
    return sandboxId;
  }
}
