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
   * Starts an E2B-compatible server in this process, on loopback, on ephemeral ports, or reaches
   * one that runs on this machine already, as the system properties choose; {@code start(Options.NONE)}.
   *
   * @return where it listens and the key it accepts; closing it stops a server it started in this process
   */
  default Endpoint start() {
    return start(Options.NONE);
  }

  /**
   * {@link #start()} as the caller configured it: what the options leave unset comes from the
   * system properties, then the defaults.
   *
   * @param options what the caller set in code
   * @return where the server listens and the key it accepts; closing it stops a server it started in this process
   * @since 0.1
   */
  Endpoint start(Options options);

  /**
   * What a caller of {@code Sandboxes.local(..)} set in code; each absent value is left to the
   * system properties, then to the runtime's default.
   *
   * @param warmPool template id to how many pre-started sandboxes a server this starts keeps ready
   *     (0 turns that template's pool off); templates not named keep their default
   * @param runtime the OCI runtime the sandboxes run on ({@code runsc} for gVisor), or null
   * @param reuse whether a server already running on this machine may be used, or null
   * @param background whether a server this starts runs as a process of its own that outlives
   *     this one, or null
   * @param stateRoot the folder where servers keep their state and announce themselves, or null
   *     for {@code $SANDBOXES_STATE_DIR}, else {@code ~/.local/state/sandboxes-local}
   * @param warmPoolMax the most pre-started sandboxes a template's pool of a server this starts
   *     grows to with demand, or null
   */
  record Options(java.util.Map<String, Integer> warmPool, @org.jspecify.annotations.Nullable String runtime,
      @org.jspecify.annotations.Nullable Boolean reuse, @org.jspecify.annotations.Nullable Boolean background,
      java.nio.file.@org.jspecify.annotations.Nullable Path stateRoot, @org.jspecify.annotations.Nullable Integer warmPoolMax) {
    /** Nothing set in code. */
    public static final Options NONE = new Options(java.util.Map.of(), null, null, null, null, null);

    /** Copies the pool sizes. */
    public Options {
      warmPool = java.util.Map.copyOf(warmPool);
    }

    /**
     * Options that leave how far a pool grows to the properties and the default.
     *
     * @param warmPool as in the canonical constructor
     * @param runtime as in the canonical constructor
     * @param reuse as in the canonical constructor
     * @param background as in the canonical constructor
     * @param stateRoot as in the canonical constructor
     */
    public Options(java.util.Map<String, Integer> warmPool, @org.jspecify.annotations.Nullable String runtime,
        @org.jspecify.annotations.Nullable Boolean reuse, @org.jspecify.annotations.Nullable Boolean background,
        java.nio.file.@org.jspecify.annotations.Nullable Path stateRoot) {
      this(warmPool, runtime, reuse, background, stateRoot, null);
    }
  }

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

    /**
     * Tells whether the server, and with it its sandboxes, keeps running after this process
     * ends: one that was running already, or one started in the background.
     *
     * @return true for a server outside this process; false for one that stops when it is closed
     */
    default boolean outlivesProcess() {
      return false;
    }

    /**
     * Waits until the server's warm pools hold the ready sandboxes they were configured to keep,
     * so the creates that follow take pre-started ones.
     *
     * @param within the longest to wait
     * @return true once every pool holds its configured size; false when one does not within the
     *     time, or when this endpoint cannot see the server's pools (the default, and a server
     *     outside this process)
     * @since 0.1
     */
    default boolean awaitWarmPool(java.time.Duration within) {
      return false;
    }

    /** Stops a server started in this process, leaving its sandboxes as configured; leaves any other server running. */
    @Override
    void close();
  }
}
