package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * Which volumes {@link VolumeManagement#listVolumes} returns.
 *
 * @param namePrefix only names starting with this, or null for all
 * @param attached only attached ({@code true}) or only unattached ({@code false}) volumes, or null for both
 * @since 0.1
 */
public record VolumeQuery(@Nullable String namePrefix, @Nullable Boolean attached) {

  /**
   * Returns the query that matches every volume.
   *
   * @return every volume
   */
  public static VolumeQuery all() {
    return new VolumeQuery(null, null);
  }

  /**
   * Returns a query for the volumes whose name starts with a prefix.
   *
   * @param prefix the name prefix
   * @return volumes whose name starts with it
   */
  public static VolumeQuery prefixed(String prefix) {
    return new VolumeQuery(prefix, null);
  }

  /**
   * Returns a copy that keeps only attached, or only unattached, volumes.
   *
   * @param attached the attachment to keep
   * @return a copy filtering on it
   */
  public VolumeQuery withAttached(boolean attached) {
    return new VolumeQuery(namePrefix, attached);
  }
}
