package io.sandboxes;

/**
 * The sandbox positively does not exist (or is not visible to this key): the server said so.
 * Never thrown for "could not find out"; that is a plain {@link SandboxException}.
 *
 * @since 0.1
 */
public class SandboxNotFoundException extends SandboxException {
  private static final long serialVersionUID = 1L;

  private final String sandboxId;

  /**
   * @param sandboxId the sandbox that was looked up
   * @param message the server's explanation
   */
  public SandboxNotFoundException(String sandboxId, String message) {
    super("sandbox " + sandboxId + " not found: " + message);
    this.sandboxId = sandboxId;
  }

  /** @return the id that was looked up */
  public String sandboxId() {
    return sandboxId;
  }
}
