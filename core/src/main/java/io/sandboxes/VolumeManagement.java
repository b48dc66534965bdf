package io.sandboxes;

import java.util.List;

/**
 * A provider with named volumes: storage that outlives sandboxes.
 *
 * @since 0.1
 */
public interface VolumeManagement {

  /** Creates the volume unless one of that name exists (idempotent). */
  void createVolume(String name);

  /** Removes the volume of that name; an absent volume is success. */
  void removeVolume(String name);

  /**
   * @return whether a volume of that name exists
   * @throws SandboxException when the provider cannot look; never {@code false} instead
   */
  boolean volumeExists(String name);

  /**
   * Lists volumes, each marked attached when a running or paused sandbox mounts it.
   *
   * @throws SandboxException when either the volume or the sandbox listing cannot be read
   */
  List<VolumeDescriptor> listVolumes(VolumeQuery query);
}
