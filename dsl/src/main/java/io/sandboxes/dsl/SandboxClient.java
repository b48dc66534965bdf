package io.sandboxes.dsl;

import com.google.errorprone.annotations.CheckReturnValue;
import io.sandboxes.EgressVerdict;
import io.sandboxes.Sandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.util.Objects;
import java.util.Optional;

/**
 * Where sandboxes come from, as {@link Sandboxes} hands it out: {@link #create()} begins a
 * sandbox request; the provider underneath is there for everything else.
 *
 * <pre>{@code
 * try (SandboxClient sandboxes = Sandboxes.local()) {
 *   System.out.println(sandboxes.create().exec("python3 -c 'print(6 * 7)'").stdout());
 * }
 * }</pre>
 *
 * <p>Closing it releases its HTTP client and, for {@link Sandboxes#local()}, stops the
 * in-process server (and its sandboxes). Thread-safe.
 *
 * @since 0.1
 */
@CheckReturnValue
public final class SandboxClient implements AutoCloseable {
  private final E2BSandboxProvider provider;

  SandboxClient(E2BSandboxProvider provider) {
    this.provider = Objects.requireNonNull(provider, "provider");
  }

  /**
   * Begins a sandbox request; nothing is created until its terminal verb.
   *
   * @return a request with the defaults (template {@code base}, 5 minutes)
   */
  public SandboxRequest create() {
    return SandboxRequest.defaults(provider);
  }

  /**
   * The provider underneath, for the provider-neutral API and E2B's raw API.
   *
   * @return the provider ({@code provider().api()} is E2B's API call for call)
   */
  public E2BSandboxProvider provider() {
    return provider;
  }

  /**
   * Connects to an existing sandbox.
   *
   * @param sandboxId the sandbox's id
   * @return a handle, or empty when the server says it does not exist
   * @throws io.sandboxes.SandboxException when the server could not be asked
   */
  public Optional<Sandbox> get(String sandboxId) {
    return provider.get(sandboxId);
  }

  /**
   * Checks, by observation from a throwaway sandbox, that egress is locked down.
   *
   * @return what the probe observed (see {@link E2BSandboxProvider#verifyEgress()})
   */
  public EgressVerdict verifyEgress() {
    return provider.verifyEgress();
  }

  /** Releases the client (and a local server it started). Idempotent. */
  @Override
  public void close() {
    provider.close();
  }

  @Override
  public String toString() {
    return "SandboxClient[" + provider.apiUrl() + "]";
  }
}
