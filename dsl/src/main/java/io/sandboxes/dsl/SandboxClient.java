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

  /** @return a request for a sandbox with the defaults (template {@code base}, 5 minutes); nothing is created yet */
  public SandboxRequest create() {
    return SandboxRequest.defaults(provider);
  }

  /** @return the provider, for the provider-neutral API and E2B's raw API ({@code provider().api()}) */
  public E2BSandboxProvider provider() {
    return provider;
  }

  /** @return a handle to an existing sandbox, or empty when it positively does not exist */
  public Optional<Sandbox> get(String sandboxId) {
    return provider.get(sandboxId);
  }

  /** @return what a probe sandbox observed about egress (see {@link E2BSandboxProvider#verifyEgress()}) */
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
