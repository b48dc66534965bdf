package io.sandboxes.local;

import io.sandboxes.local.internal.docker.DockerLocator;
import io.sandboxes.spi.LocalRuntime;
import java.net.URI;

/**
 * Lets {@code Sandboxes.local()} find and start the local server through
 * {@link java.util.ServiceLoader}. Not for direct use.
 *
 * @since 0.1
 */
public final class LocalRuntimeService implements LocalRuntime {

  /** Needed by {@link java.util.ServiceLoader}. */
  public LocalRuntimeService() {}

  /**
   * Looks for a Docker engine the way {@link #start()} does (a raw ping of each candidate, a few
   * seconds at most) without starting anything.
   */
  @Override
  public java.util.Optional<String> unavailableReason() {
    try {
      return DockerLocator.unavailableReason(DockerLocator.Environment.system());
    } catch (RuntimeException e) {
      return java.util.Optional.of("looking for a Docker engine failed: " + e);
    }
  }

  @Override
  public Endpoint start() {
    LocalServer server = LocalServer.builder().progress(line -> System.err.println("[sandboxes-local] " + line)).build().start();
    return new Endpoint() {
      @Override
      public URI apiUrl() {
        return server.apiUrl();
      }

      @Override
      public URI sandboxUrl() {
        return server.sandboxUrl();
      }

      @Override
      public String apiKey() {
        return server.apiKey();
      }

      @Override
      public java.util.Optional<io.sandboxes.EgressProbe> egressProbe() {
        return java.util.Optional.of(server.egressProbe());
      }

      @Override
      public java.util.Optional<java.util.function.BiFunction<String, Integer, String>> previewUrls() {
        return java.util.Optional.of((sandboxId, port) -> server.forward(sandboxId, port).toString());
      }

      @Override
      public void close() {
        server.close();
      }
    };
  }
}
