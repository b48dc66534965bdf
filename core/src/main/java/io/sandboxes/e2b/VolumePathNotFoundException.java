package io.sandboxes.e2b;

import io.sandboxes.SandboxApiException;
import org.jspecify.annotations.Nullable;

/**
 * The volume content API has nothing at that path (HTTP 404), as E2B's
 * {@code VolumePathNotFoundError}.
 *
 * @since 0.1
 */
public class VolumePathNotFoundException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /** The path that was asked for. */
  private final String path;

  /**
   * Creates the exception.
   *
   * @param path the path inside the volume
   * @param serverMessage the {@code message} of the error body, when it had one
   * @param context what was being attempted
   */
  public VolumePathNotFoundException(String path, @Nullable String serverMessage, String context) {
    super(404, serverMessage, context);
    this.path = path;
  }

  /**
   * Returns the path that was asked for.
   *
   * @return the path inside the volume
   */
  public String path() {
    return path;
  }
}
