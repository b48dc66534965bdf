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

  /**
   * The system property naming the OCI runtime of the sandboxes {@code Sandboxes.local()} starts,
   * e.g. {@code -Dsandboxes.local.runtime=runsc} for gVisor (see {@link LocalServer.Builder#runtime(String)}).
   */
  public static final String RUNTIME_PROPERTY = "sandboxes.local.runtime";

  @Override
  public Endpoint start() {
    return start(System::getProperty);
  }

  /** {@link #start()} with the system properties read from {@code properties}. */
  Endpoint start(java.util.function.Function<String, @org.jspecify.annotations.Nullable String> properties) {
    quietSlf4jWithoutProvider();
    LocalServer.Builder builder = LocalServer.builder().progress(line -> System.err.println("[sandboxes-local] " + line));
    String runtime = properties.apply(RUNTIME_PROPERTY);
    if (runtime != null && !runtime.isBlank()) {
      builder.runtime(runtime.strip());
    }
    LocalServer server = builder.build().start();
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

  private static final String SLF4J_VERBOSITY = "slf4j.internal.verbosity";

  /**
   * Keeps SLF4J from printing its three-line "No SLF4J providers were found" warning when the
   * program chose no logging backend: a program that uses {@code Sandboxes.local()} and logs
   * nothing should print nothing, and the warning is about our dependency, not the program.
   *
   * <p>SLF4J reads {@code slf4j.internal.verbosity} once, when it first reports, which is when it
   * first initializes. So this runs before anything of ours touches SLF4J (the server's classes
   * do, as they load), raises the threshold to ERROR only when the user has set neither that
   * property nor {@code slf4j.provider} and there is positively no provider (no SLF4J 2 service
   * provider, no SLF4J 1 binding, whose warning is worth seeing), makes SLF4J initialize there
   * and then, and takes the property away again. A program that has a provider, or whose SLF4J
   * has already initialized, is left exactly as it was.
   */
  private static void quietSlf4jWithoutProvider() {
    if (System.getProperty(SLF4J_VERBOSITY) != null || System.getProperty("slf4j.provider") != null) {
      return;
    }
    ClassLoader loader = org.slf4j.LoggerFactory.class.getClassLoader();
    if (loader.getResource("org/slf4j/impl/StaticLoggerBinder.class") != null) {
      return;
    }
    Class<?> provider;
    try {
      // by name: a project may resolve SLF4J 1.7 (Testcontainers 1.x brings it), which has no such type
      provider = Class.forName("org.slf4j.spi.SLF4JServiceProvider", false, loader);
    } catch (ClassNotFoundException slf4j1) {
      return; // SLF4J 1.7 (no verbosity setting to raise): it warns as it does for the rest of the project
    }
    try {
      if (java.util.ServiceLoader.load(provider, loader).stream().findAny().isPresent()) {
        return;
      }
    } catch (java.util.ServiceConfigurationError e) {
      return; // a broken provider: SLF4J's own report about it is worth seeing
    }
    System.setProperty(SLF4J_VERBOSITY, "ERROR");
    try {
      org.slf4j.LoggerFactory.getILoggerFactory();
    } finally {
      System.clearProperty(SLF4J_VERBOSITY);
    }
  }
}
