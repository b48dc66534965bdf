package io.sandboxes.local;

import io.sandboxes.local.internal.Registry;

/** For tests in other packages: a started server's registry, which {@link LocalServer} keeps to this package. */
public final class ServerAccess {
  private ServerAccess() {}

  /** @return the registry of a started server */
  public static Registry registry(LocalServer server) {
    return server.registry();
  }
}
