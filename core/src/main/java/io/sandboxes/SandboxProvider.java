package io.sandboxes;

import java.util.List;
import java.util.Optional;

/**
 * Where sandboxes come from. The required surface is {@link #create}, {@link #get},
 * {@link #list} and {@link #destroy}; optional features are capability interfaces
 * ({@link Describing}, {@link VolumeManagement}, {@link TemplateManagement},
 * {@link EgressVerification}) that a caller tests for with {@link #capability(Class)}. A provider
 * that lacks a feature does not implement it: nothing is a silent no-op.
 *
 * <p>Lookups are honest: an empty result means the provider positively found nothing; a failure
 * to look always throws.
 *
 * @since 0.1
 */
public interface SandboxProvider extends AutoCloseable {

  /**
   * Returns the provider's name.
   *
   * @return a short name, e.g. {@code e2b}
   */
  String name();

  /**
   * Creates a sandbox and returns a live handle to it.
   *
   * @param config the project, template, environment, labels and volume
   * @return a handle to the running sandbox; closing it destroys the sandbox
   * @throws SandboxException when it cannot be created, or when the configuration asks for
   *     something the provider cannot do
   */
  Sandbox create(SandboxConfig config);

  /**
   * Finds a sandbox and connects to it.
   *
   * @param sandboxId the sandbox's id
   * @return the handle, or empty only when the sandbox positively does not exist
   * @throws SandboxException for any other failure
   */
  Optional<Sandbox> get(String sandboxId);

  /**
   * Lists the running sandboxes these credentials can see, as live handles, in the provider's
   * order. Paused ones are left out, without being woken.
   *
   * @return the handles, empty only when the provider positively lists none
   * @throws SandboxException when the listing cannot be read; never a partial or empty list instead
   */
  List<Sandbox> list();

  /**
   * Destroys a sandbox.
   *
   * @param sandboxId the sandbox's id
   * @throws SandboxException when it fails
   */
  void destroy(String sandboxId);

  /**
   * Returns this provider as an optional feature, when it has that feature.
   *
   * @param <C> the capability's type
   * @param capability a capability interface, e.g. {@code VolumeManagement.class}
   * @return this provider as that capability, when it has it
   */
  default <C> Optional<C> capability(Class<C> capability) {
    return capability.isInstance(this) ? Optional.of(capability.cast(this)) : Optional.empty();
  }

  /** Releases the provider's resources (not its sandboxes). Idempotent. */
  @Override
  void close();
}
