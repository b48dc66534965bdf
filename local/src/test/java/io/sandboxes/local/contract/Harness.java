package io.sandboxes.local.contract;

import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.LocalServer;
import java.util.function.UnaryOperator;

/**
 * The E2B provider under test, pointed at the real local server through two {@link FaultServer}s
 * (control plane and envd), so a test can read what crossed the wire and script failures.
 */
final class Harness implements AutoCloseable {
  final FaultServer api;
  final FaultServer envd;
  final E2BSandboxProvider provider;
  final LocalServer server;

  Harness(LocalServer server, UnaryOperator<E2BSandboxProvider.Builder> configure) throws Exception {
    this.server = server;
    this.api = new FaultServer(server.apiUrl());
    this.envd = new FaultServer(server.sandboxUrl());
    this.provider = configure.apply(E2BSandboxProvider.builder()
        .apiUrl(api.url())
        .sandboxUrl(envd.url())
        .apiKey(server.apiKey())
        .environment(java.util.Map.of())).build();
  }

  Harness(LocalServer server) throws Exception {
    this(server, b -> b);
  }

  @Override
  public void close() throws Exception {
    provider.close();
    api.close();
    envd.close();
  }
}
