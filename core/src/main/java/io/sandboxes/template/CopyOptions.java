package io.sandboxes.template;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Template#copy(String, String, CopyOptions)} places its files. Immutable; each
 * {@code with...} method returns a copy.
 *
 * @param user who owns the copied files, or {@code null} for the user in effect at that step
 * @param mode the permission bits every copied file and folder gets (e.g. {@code 0755}), or
 *     {@code null} to keep each file's own
 * @param forceUpload true to upload the files even when the server says it has them
 * @since 0.1
 */
public record CopyOptions(@Nullable String user, @Nullable Integer mode, boolean forceUpload) {

  /** Validates the components. */
  public CopyOptions {
    if (user != null && user.isBlank()) {
      throw new IllegalArgumentException("user must not be blank");
    }
    if (mode != null && (mode < 0 || mode > 07777)) {
      throw new IllegalArgumentException("mode must be permission bits from 0 to 07777, got " + Integer.toOctalString(mode));
    }
  }

  /**
   * The defaults.
   *
   * @return options that keep the user in effect, each file's own mode, and the server's cache
   */
  public static CopyOptions defaults() {
    return new CopyOptions(null, null, false);
  }

  /**
   * Sets who owns the copied files.
   *
   * @param user a user name in the image
   * @return a copy with it
   */
  public CopyOptions withUser(String user) {
    return new CopyOptions(Objects.requireNonNull(user, "user"), mode, forceUpload);
  }

  /**
   * Sets the permission bits of every copied file and folder.
   *
   * @param mode permission bits, e.g. {@code 0755}
   * @return a copy with it
   */
  public CopyOptions withMode(int mode) {
    return new CopyOptions(user, mode, forceUpload);
  }

  /**
   * Uploads the files even when the server says it has them.
   *
   * @return a copy that always uploads
   */
  public CopyOptions withForceUpload() {
    return new CopyOptions(user, mode, true);
  }
}
