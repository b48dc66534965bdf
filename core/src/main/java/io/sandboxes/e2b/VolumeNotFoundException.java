package io.sandboxes.e2b;

import io.sandboxes.SandboxApiException;
import org.jspecify.annotations.Nullable;

/**
 * The control plane has no volume of that id (HTTP 404), as E2B's {@code VolumeNotFoundError}.
 *
 * @since 0.1
 */
public class VolumeNotFoundException extends SandboxApiException {
  private static final long serialVersionUID = 1L;

  /** The id that was looked for. */
  private final String volumeId;

  /**
   * Creates the exception.
   *
   * @param volumeId the id that was looked for
   * @param serverMessage the {@code message} of the error body, when it had one
   * @param context what was being attempted
   */
  public VolumeNotFoundException(String volumeId, @Nullable String serverMessage, String context) {
    super(404, serverMessage, context);
    this.volumeId = volumeId;
  }

  /**
   * Returns the id that was looked for.
   *
   * @return the volume id
   */
  public String volumeId() {
    return volumeId;
  }
}
