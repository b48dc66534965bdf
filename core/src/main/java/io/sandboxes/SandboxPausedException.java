package io.sandboxes;

/**
 * The sandbox exists but is paused: its daemon does not answer until it is resumed
 * ({@link Sandbox#resume()}, or connecting to it again), and it was not created to resume by itself
 * when called (E2B's {@code autoResume}). The control plane said so; nothing was run.
 *
 * <p>Not a {@link SandboxNotFoundException}: the sandbox is there, with its files (and, after a
 * memory pause, its processes), and resuming it brings them back.
 *
 * @since 0.1
 */
public class SandboxPausedException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The paused sandbox's id. */
  private final String sandboxId;

  /**
   * Creates the exception; its message names the sandbox and how to resume it.
   *
   * @param sandboxId the paused sandbox
   * @param what what was asked of it, such as {@code "exec in sandbox <id>"}
   */
  public SandboxPausedException(String sandboxId, String what) {
    super("sandbox " + sandboxId + " is paused, so " + what + " did not run: resume it (sandbox.resume(), or connect to it"
        + " again) first, or create it with autoResume so that a call wakes it");
    this.sandboxId = sandboxId;
  }

  /**
   * Creates the exception for a sandbox that was paused while a call into it was under way.
   *
   * @param sandboxId the paused sandbox
   * @param message what happened
   * @param cause the broken call
   */
  public SandboxPausedException(String sandboxId, String message, Throwable cause) {
    super(message, cause);
    this.sandboxId = sandboxId;
  }

  /**
   * Returns the paused sandbox's id.
   *
   * @return the sandbox's id
   */
  public String sandboxId() {
    return sandboxId;
  }
}
