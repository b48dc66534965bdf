package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.EgressProbe;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.local.internal.PortForwards;
import io.sandboxes.local.internal.common.RpcError;
import java.net.URI;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The local server's own routes, not E2B's: how the server is set up, the egress witnesses a
 * client checks egress against, and reaching a sandbox's port from this machine.
 */
final class LocalApi {
  private final Supplier<EgressProbe> egressProbe;
  private final BiFunction<String, Integer, URI> forward;
  private final @Nullable Supplier<ObjectNode> serverInfo;

  LocalApi(Supplier<EgressProbe> egressProbe, BiFunction<String, Integer, URI> forward, @Nullable Supplier<ObjectNode> serverInfo) {
    this.egressProbe = egressProbe;
    this.forward = forward;
    this.serverInfo = serverInfo;
  }

  /** The egress witnesses. */
  record Probe(String allowedHost, String deniedHost, String rawIp, String scheme, List<String> allowOut) {}

  /** Where a forwarded port is reached. */
  record Forwarded(String url) {}

  void routes(RouteTable.Builder t) {
    // lets a client that found this server check it is the one it means to use
    t.add("GET", "/local/server", (ex, m) -> {
      Supplier<ObjectNode> info = serverInfo;
      if (info == null) {
        return false;
      }
      ex.json(200, info.get());
      return true;
    });
    t.on("GET", "/local/egress-probe", (ex, m) -> {
      EgressProbe p = egressProbe.get();
      Bodies.json(ex, 200, new Probe(p.allowedHost(), p.deniedHost(), p.rawIp(), p.scheme(), List.copyOf(p.allowOut())));
    });
    // LocalServer.forward over HTTP
    t.on("POST", "/local/sandboxes/([^/]+)/ports/([^/]+)", (ex, m) -> forward(ex, m.group(1), m.group(2)));
  }

  private void forward(Exchange ex, String id, String rawPort) throws RpcError {
    int number;
    try {
      number = Integer.parseInt(rawPort);
    } catch (NumberFormatException e) {
      throw new RpcError("invalid_argument", "port must be between 1 and 65535, got " + rawPort);
    }
    try {
      Bodies.json(ex, 200, new Forwarded(forward.apply(id, number).toString()));
    } catch (SandboxNotFoundException e) {
      throw new RpcError("not_found", "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", e.getMessage());
    } catch (SandboxException e) {
      if (e.getCause() instanceof PortForwards.LimitReached) {
        throw new RpcError("resource_exhausted", e.getMessage());
      }
      throw e;
    }
  }
}
