package io.sandboxes.local.internal.http;

import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;

/** Finds the sandbox a control-plane path names, or says why it is not there. */
final class Lookup {
  private final Registry registry;

  Lookup(Registry registry) {
    this.registry = registry;
  }

  LocalSandbox find(String id) throws RpcError {
    return registry.find(id).orElseThrow(() -> notFound(id));
  }

  /** E2B's 404 for a sandbox, with why it ended when this server knows. */
  RpcError notFound(String id) {
    String message = "Sandbox \"" + id + "\" doesn't exist or you don't have access to it";
    return new RpcError("not_found", registry.endedFromOutside(id).map(why -> message + "; it ended: " + why)
        .or(() -> registry.stoppedReason(id).map(r -> message + ": " + r)).orElse(message));
  }
}
