package io.sandboxes.e2b;

import org.jspecify.annotations.Nullable;

/**
 * Owner, mode and overwrite for a directory made or a file written in a volume, as E2B's
 * {@code VolumeWriteOpts}; each left null is not sent, and the server chooses.
 *
 * @param uid the user id to own the entry, or null
 * @param gid the group id to own the entry, or null
 * @param mode the permission bits, or null
 * @param force for {@link Volume#makeDir}: make missing parents too; for {@link Volume#writeFile}:
 *     overwrite an existing file; null to send nothing
 * @since 0.1
 */
public record VolumeWriteOptions(@Nullable Integer uid, @Nullable Integer gid, @Nullable Integer mode, @Nullable Boolean force) {
  /** Nothing set: the server's defaults. */
  public static final VolumeWriteOptions DEFAULTS = new VolumeWriteOptions(null, null, null, null);

  /** Validates the components. */
  public VolumeWriteOptions {
    Volume.requireUnsigned(uid, "uid");
    Volume.requireUnsigned(gid, "gid");
    Volume.requireUnsigned(mode, "mode");
  }

  /**
   * These options with an owner.
   *
   * @param uid the user id
   * @param gid the group id
   * @return new options
   */
  public VolumeWriteOptions withOwner(int uid, int gid) {
    return new VolumeWriteOptions(uid, gid, mode, force);
  }

  /**
   * These options with permission bits.
   *
   * @param mode e.g. {@code 0644}
   * @return new options
   */
  public VolumeWriteOptions withMode(int mode) {
    return new VolumeWriteOptions(uid, gid, mode, force);
  }

  /**
   * These options with {@code force}.
   *
   * @param force make missing parents (directories), or overwrite (files)
   * @return new options
   */
  public VolumeWriteOptions withForce(boolean force) {
    return new VolumeWriteOptions(uid, gid, mode, force);
  }
}
