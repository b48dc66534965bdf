package io.sandboxes;

import java.util.List;

/**
 * A provider with named volumes: storage that outlives sandboxes.
 *
 * @since 0.1
 */
public interface VolumeManagement {

  /**
   * Creates the volume unless one of that name exists (idempotent).
   *
   * @param name the volume's name
   */
  void createVolume(String name);

  /**
   * Removes the volume of that name; an absent volume is success.
   *
   * @param name the volume's name
   */
  void removeVolume(String name);

  /**
   * Tells whether a volume exists.
   *
   * @param name the volume's name
   * @return whether a volume of that name exists
   * @throws SandboxException when the provider cannot look; never {@code false} instead
   */
  boolean volumeExists(String name);

  /**
   * Lists volumes, each marked attached when a running or paused sandbox mounts it.
   *
   * @param query a name prefix and an attachment filter
   * @return the volumes that match, empty only when the provider positively has none
   * @throws SandboxException when either the volume or the sandbox listing cannot be read
   */
  List<VolumeDescriptor> listVolumes(VolumeQuery query);
}
