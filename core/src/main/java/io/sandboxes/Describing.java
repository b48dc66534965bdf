package io.sandboxes;

import java.util.Optional;

/**
 * A provider that can read a sandbox's record without connecting to it (so a paused sandbox
 * stays paused).
 *
 * @since 0.1
 */
public interface Describing {

  /**
   * Reads a sandbox's record (state, template, metadata, times) without connecting to it.
   *
   * @param sandboxId the sandbox's id
   * @return the record, or empty only when the sandbox positively does not exist
   * @throws SandboxException when the record cannot be read
   */
  Optional<SandboxInfo> describe(String sandboxId);
}
