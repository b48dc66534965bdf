package io.sandboxes.dsl;

import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.spi.LocalRuntime;
import java.net.URI;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * The one entry point: pick where sandboxes run, then {@code create()} a sandbox, or begin a
 * {@code sandbox()} request, configure it, and finish with a terminal verb ({@code create},
 * {@code exec}, {@code run}, {@code apply}).
 *
 * {@snippet class=io.sandboxes.snippets.DslSnippets region=sandboxes :
 * try (SandboxClient sandboxes = Sandboxes.local();               // Docker on this machine
 *      LiveSandbox sandbox = sandboxes.sandbox().timeout(Duration.ofMinutes(10)).create()) {
 *   System.out.println(sandbox.exec("python3 -c 'print(6 * 7)'").stdout());
 * }
 * }
 *
 * <p>Every client speaks E2B's protocol, so code written against one runs against the others.
 * Close the client when done: for {@link #local()} that also stops a server it started in this
 * process.
 *
 * @since 0.1
 */
public final class Sandboxes {
  private Sandboxes() {}

  /**
   * E2B's cloud, configured from the environment ({@code E2B_API_KEY}, and optionally
   * {@code E2B_API_URL}, {@code E2B_SANDBOX_URL}, {@code E2B_DOMAIN}).
   *
   * @return a provider for E2B's cloud
   */
  public static SandboxClient e2b() {
    return e2b(System.getenv());
  }

  /** {@link #e2b()} with the {@code E2B_*} variables read from {@code environment}. */
  static SandboxClient e2b(java.util.Map<String, String> environment) {
    return new SandboxClient(E2BSandboxProvider.builder().environment(environment).build(), SandboxClient.Origin.E2B);
  }

  /**
   * E2B's cloud, or any E2B-compatible server, with the provider configured in code: unset values
   * still come from the environment. This is where your own transport goes, e.g. a TLS context
   * that trusts a private CA, a corporate proxy, or a whole {@link java.net.http.HttpClient}.
   *
   * {@snippet :
   * try (SandboxClient sandboxes = Sandboxes.e2b(b -> b.sslContext(corporateTls).proxy(corporateProxy))) {
   *   // ...
   * }
   * }
   *
   * @param configure sets what the environment should not decide, on the builder it is given,
   *     and returns that builder
   * @return a client for the provider so configured
   * @throws NullPointerException when {@code configure} is null or returns null
   * @see E2BSandboxProvider.Builder#httpClient(java.net.http.HttpClient)
   */
  public static SandboxClient e2b(java.util.function.UnaryOperator<E2BSandboxProvider.Builder> configure) {
    Objects.requireNonNull(configure, "configure");
    E2BSandboxProvider.Builder b = Objects.requireNonNull(configure.apply(E2BSandboxProvider.builder()),
        "configure returned null instead of the builder");
    return new SandboxClient(b.build(), SandboxClient.Origin.E2B);
  }

  /**
   * E2B's cloud when {@code E2B_API_KEY} is set, the local runtime otherwise; one log line says
   * which.
   *
   * @return a client for whichever it is
   */
  public static SandboxClient auto() {
    return autoWith(System::getenv);
  }

  /** Whether the environment names an E2B key, which is what makes {@link #auto()} choose E2B's cloud. */
  private static boolean hasKey(java.util.function.Function<String, String> environment) {
    String key = environment.apply("E2B_API_KEY");
    return key != null && !key.isBlank();
  }

  private static java.util.Optional<LocalRuntime> localRuntime() {
    return ServiceLoader.load(LocalRuntime.class).findFirst();
  }

  /**
   * {@link #auto()}, with the local runtime configured in code for when it is the one chosen; with
   * {@code E2B_API_KEY} set, {@code local} is not called.
   *
   * @param local sets what it wants on the local runtime's options, and returns them
   * @return a client for whichever it is
   * @throws NullPointerException when {@code local} is null, or returns null when called
   * @since 0.1
   */
  public static SandboxClient auto(java.util.function.UnaryOperator<LocalOptions> local) {
    Objects.requireNonNull(local, "local");
    return auto(System::getenv, local);
  }

  static SandboxClient autoWith(java.util.function.Function<String, String> environment) {
    return auto(environment, java.util.function.UnaryOperator.identity());
  }

  private static SandboxClient auto(java.util.function.Function<String, String> environment,
      java.util.function.UnaryOperator<LocalOptions> local) {
    if (hasKey(environment)) {
      Log.info(Sandboxes.class, "Sandboxes: using E2B's cloud (E2B_API_KEY is set)");
      return e2b();
    }
    Log.info(Sandboxes.class, "Sandboxes: using the local runtime (no E2B_API_KEY)");
    return local(local);
  }

  /**
   * Says, without starting or creating anything, why {@link #auto()} could serve no sandbox on
   * this machine: no {@code E2B_API_KEY}, and the local runtime either missing from the class path
   * or without a Docker engine. Test frameworks use it to skip rather than fail.
   *
   * @return what is missing, or empty when {@link #auto()} has something to use
   */
  public static java.util.Optional<String> unavailableReason() {
    return unavailableReason(System::getenv, Sandboxes::localRuntime);
  }

  static java.util.Optional<String> unavailableReason(java.util.function.Function<String, String> environment,
      java.util.function.Supplier<java.util.Optional<LocalRuntime>> localRuntime) {
    if (hasKey(environment)) {
      return java.util.Optional.empty();
    }
    java.util.Optional<LocalRuntime> runtime = localRuntime.get();
    if (runtime.isEmpty()) {
      return java.util.Optional.of("E2B_API_KEY is not set and the local runtime (io.sandboxes:sandboxes-local) is not on the class path");
    }
    return runtime.get().unavailableReason().map(why -> "E2B_API_KEY is not set and the local runtime cannot run: " + why);
  }

  /**
   * Any E2B-compatible server, e.g. a local server started elsewhere with
   * {@code sandboxes-local serve}.
   *
   * @param apiUrl the control-plane URL ({@code E2B_API_URL})
   * @param sandboxUrl the daemon URL shared by its sandboxes ({@code E2B_SANDBOX_URL})
   * @param apiKey the server's API key
   * @return a provider for that server
   */
  public static SandboxClient at(URI apiUrl, URI sandboxUrl, String apiKey) {
    Objects.requireNonNull(apiUrl, "apiUrl");
    Objects.requireNonNull(sandboxUrl, "sandboxUrl");
    Objects.requireNonNull(apiKey, "apiKey");
    return new SandboxClient(E2BSandboxProvider.builder().apiUrl(apiUrl).sandboxUrl(sandboxUrl).apiKey(apiKey).build(),
        SandboxClient.Origin.AT);
  }

  /**
   * The local runtime: sandboxes in Docker on this machine, through an E2B-compatible server on
   * loopback. Needs {@code io.sandboxes:sandboxes-local} on the class path and a Docker engine.
   *
   * <p>A {@code sandboxes-local} server already running on this machine is used when there is
   * one: the one the environment variable {@code SANDBOXES_LOCAL_URL} names (with its key in
   * {@code SANDBOXES_LOCAL_API_KEY}), and then only that one, else the one a running
   * {@code sandboxes-local serve} announced in the state folder, if it is still live, this user's,
   * on loopback, and keeps sandboxes from the network by default. Its sandboxes outlive this
   * program. Otherwise the server starts in this process, on ephemeral ports with a fresh API key,
   * and stops, killing its sandboxes, when the client is closed or the JVM exits; or, with
   * {@link LocalOptions#background(boolean)}, in a process of its own that outlives this one.
   * The first start on a machine builds the base image, which takes about a minute.
   *
   * <p>The system properties {@code sandboxes.local.warm-pool}, {@code sandboxes.local.runtime},
   * {@code sandboxes.local.reuse} and {@code sandboxes.local.background} set what
   * {@link #local(java.util.function.UnaryOperator)} sets in code; e.g.
   * {@code -Dsandboxes.local.runtime=runsc} runs sandboxes under gVisor, once Docker knows it
   * ({@code scripts/docker-up.sh --runsc}).
   *
   * @return a client; closing it stops a server it started in this process (and kills that
   *     server's sandboxes), and leaves any other server running
   * @throws SandboxException when the local runtime is not on the class path or cannot start
   */
  public static SandboxClient local() {
    return local(LocalRuntime.Options.NONE);
  }

  /**
   * {@link #local()}, configured in code: the warm pool of the server it starts, the runtime,
   * whether a running server may be reused, and whether a server it starts outlives the JVM.
   * What the function does not set comes from the system properties, then the defaults.
   *
   * {@snippet :
   * try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(0))) {   // no pre-started sandboxes
   *   // ...
   * }
   * }
   *
   * @param configure sets what it wants on the options it is given, and returns them
   * @return a client; closing it stops a server it started in this process, and leaves any other running
   * @throws NullPointerException when {@code configure} is null or returns null
   * @throws SandboxException when the local runtime is not on the class path or cannot start
   */
  public static SandboxClient local(java.util.function.UnaryOperator<LocalOptions> configure) {
    Objects.requireNonNull(configure, "configure");
    LocalOptions options = Objects.requireNonNull(configure.apply(new LocalOptions()),
        "configure returned null instead of the options");
    return local(options.toSpi());
  }

  private static SandboxClient local(LocalRuntime.Options options) {
    LocalRuntime runtime = localRuntime().orElseThrow(() -> new SandboxException(
        "Sandboxes.local() needs the local runtime: add io.sandboxes:sandboxes-local to the class path"));
    LocalRuntime.Endpoint endpoint = runtime.start(options);
    try {
      E2BSandboxProvider.Builder b = E2BSandboxProvider.builder()
          .apiUrl(endpoint.apiUrl())
          .sandboxUrl(endpoint.sandboxUrl())
          .apiKey(endpoint.apiKey())
          .closing(endpoint);
      // verification probes the local server's own witnesses, never public hosts
      endpoint.egressProbe().ifPresent(b::egressProbe);
      // preview URLs reach the sandbox's ports through the server's forwarding
      endpoint.previewUrls().ifPresent(b::previewUrls);
      return new SandboxClient(b.build(), endpoint.outlivesProcess() ? SandboxClient.Origin.LOCAL_SHARED
          : SandboxClient.Origin.LOCAL_IN_PROCESS, endpoint);
    } catch (RuntimeException e) {
      endpoint.close();
      throw e;
    }
  }
}
