package io.sandboxes.local;

import java.util.Optional;

/**
 * The OCI runtime the tests' servers run their sandboxes on: the engine's default (runc) unless
 * the run names one in the system property {@code sandboxes.local.runtime}, as the CI's gVisor
 * pass does ({@code -Dsandboxes.local.runtime=runsc}). Tests that start a server of their own
 * take its builder from {@link #builder()}, so the whole pass runs on the runtime it names.
 */
public final class TestRuntime {
  private TestRuntime() {}

  /** @return the runtime the run names, if it names one */
  public static Optional<String> named() {
    String r = System.getProperty(LocalRuntimeService.RUNTIME_PROPERTY);
    return r == null || r.isBlank() ? Optional.empty() : Optional.of(r.strip());
  }

  /** @return whether this run's sandboxes are on gVisor */
  public static boolean gvisor() {
    return named().filter(n -> n.equals("runsc")).isPresent();
  }

  /** @return a server builder on this run's runtime */
  public static LocalServer.Builder builder() {
    LocalServer.Builder b = LocalServer.builder();
    named().ifPresent(b::runtime);
    return b;
  }
}
