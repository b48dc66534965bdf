package io.sandboxes.spi;

import java.net.URI;

/**
 * Service-provider interface through which the DSL finds the local runtime when
 * {@code sandboxes-local} is on the class path ({@link java.util.ServiceLoader}). Not for
 * application code.
 *
 * @since 0.1
 */
public interface LocalRuntime {

  /**
   * Starts an E2B-compatible server in this process, on loopback, on ephemeral ports.
   *
   * @return where it listens and the key it accepts; closing it stops the server
   */
  Endpoint start();

  /**
   * Says, without starting anything, why {@link #start()} could not work on this machine (no
   * Docker engine reachable, say), or nothing when it could.
   *
   * @return what is missing, or empty when the runtime looks usable
   */
  default java.util.Optional<String> unavailableReason() {
    return java.util.Optional.empty();
  }

  /** A running local server. */
  interface Endpoint extends AutoCloseable {
    /**
     * Returns where the server's control plane (E2B's REST API) listens.
     *
     * @return the control-plane base URL
     */
    URI apiUrl();

    /**
     * Returns where the server's in-sandbox daemon API (envd) listens.
     *
     * @return the daemon URL shared by all its sandboxes
     */
    URI sandboxUrl();

    /**
     * Returns the API key the server accepts.
     *
     * @return the key
     */
    String apiKey();

    /**
     * Returns what egress verification should probe on this server, when it says.
     *
     * @return the targets to probe on this server (its own witnesses), or empty to let the provider choose
     */
    default java.util.Optional<io.sandboxes.EgressProbe> egressProbe() {
      return java.util.Optional.empty();
    }

    /**
     * Returns how this server's sandbox ports are reached, when it forwards them.
     *
     * @return where a sandbox's port is reached from this machine, given its id and the port, when
     *     the server forwards ports; empty when it does not
     */
    default java.util.Optional<java.util.function.BiFunction<String, Integer, String>> previewUrls() {
      return java.util.Optional.empty();
    }

    /** Stops the server, leaving its sandboxes as configured. */
    @Override
    void close();
  }
}
