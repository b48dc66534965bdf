package io.sandboxes.local.internal.runtime;

/**
 * The runtime refused to remove an image or a volume because something still uses it: an
 * instance, a build step, a child image or another of its names. Both the sandbox side and the
 * build side answer it, so a caller can tell "held" from "gone" from any other failure.
 */
public final class InUse extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message the runtime's own account of what uses it
   * @param cause what the runtime's client threw
   */
  public InUse(String message, Throwable cause) {
    super(message, cause);
  }
}
