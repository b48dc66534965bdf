package io.sandboxes.local;

import io.sandboxes.e2b.E2BSandboxProvider;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One real local server (real Docker, real HTTP) for the whole test run, closed by JUnit when the
 * run ends. Test classes ask for it, or for a provider pointed at it, as a parameter.
 */
public final class SharedServer implements ParameterResolver {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SharedServer.class);

  /** The server plus a client provider, closed together. */
  public record Running(LocalServer server, E2BSandboxProvider provider, String serverId) implements AutoCloseable {
    @Override
    public void close() {
      provider.close();
      server.close();
      // what a failed test left (its snapshots, templates, fork images) goes with the run; nothing another server made
      int removed = TestImages.removeMadeBy(serverId);
      if (removed > 0) {
        System.err.println("test cleanup: removed " + removed + " images the shared server's tests left");
      }
    }
  }

  static Running running(ExtensionContext context) {
    return context.getRoot().getStore(NS).computeIfAbsent("server", key -> {
      String serverId = "shared-test-" + java.util.UUID.randomUUID().toString().substring(0, 8);
      LocalServer server = TestRuntime.builder().serverId(serverId).progress(line -> System.err.println("[base image] " + line)).build()
          .start();
      E2BSandboxProvider provider = E2BSandboxProvider.builder()
          .apiUrl(server.apiUrl())
          .sandboxUrl(server.sandboxUrl())
          .apiKey(server.apiKey())
          .build();
      return new Running(server, provider, serverId);
    }, Running.class);
  }

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
    Class<?> t = p.getParameter().getType();
    return t == LocalServer.class || t == E2BSandboxProvider.class || t == io.sandboxes.e2b.E2BApi.class || t == Running.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext e) {
    Running r = running(e);
    Class<?> t = p.getParameter().getType();
    if (t == LocalServer.class) {
      return r.server();
    }
    if (t == E2BSandboxProvider.class) {
      return r.provider();
    }
    if (t == io.sandboxes.e2b.E2BApi.class) {
      return r.provider().api();
    }
    return r;
  }
}
