package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * A write did not fit: the sandbox's daemon answered HTTP 507 (insufficient storage), as E2B's
 * {@code NotEnoughSpaceError}, because the sandbox's disk (or the file system the path is on) is
 * full. Free space in the sandbox, or write less, and try again.
 *
 * @since 0.1
 */
public class SandboxNotEnoughSpaceException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param serverMessage the {@code message} of the error body, when the body had one
   * @param context what was being attempted, e.g. {@code "write /data/big.bin in sandbox <id>"}
   */
  public SandboxNotEnoughSpaceException(@Nullable String serverMessage, String context) {
    super(507, serverMessage, context, "not enough space in the sandbox");
  }
}
