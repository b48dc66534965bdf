package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.TrafficWake;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.jspecify.annotations.Nullable;

/**
 * Whether a request for a sandbox (envd's port or another) may reach it: the sandbox is there and
 * awake (a paused one is woken when its lifecycle allows, {@link TrafficWake}), the access token
 * matches; and E2B's proxy's 502 when not.
 */
final class EnvdAccess {
  private final Registry registry;

  EnvdAccess(Registry registry) {
    this.registry = registry;
  }

  Registry registry() {
    return registry;
  }

  void sandboxMissing(Exchange ex, @Nullable String id) {
    ObjectNode body = Json.object();
    body.put("sandboxId", id == null ? "" : id);
    body.put("message", "The sandbox was not found" + (id == null ? "" : registry.stoppedReason(id).map(r -> ": " + r).orElse("")));
    body.put("code", 502);
    ex.json(502, body);
  }

  /**
   * Whether a request may reach its sandbox: it is there and running, or paused and woken now for
   * this request ({@link TrafficWake}); when not, the request is answered here. A sandbox that is
   * not there, or paused and not woken, is 502, as E2B's proxy answers, whose message says
   * "paused" for a sandbox that is there but paused (E2B's says "not found" for both; the status
   * stays, so E2B's SDKs read it as they read E2B's). A request refused because too many already
   * wait for the sandbox's resume is 503 with {@code Retry-After}.
   */
  boolean reachable(Exchange ex, @Nullable String id, @Nullable LocalSandbox sandbox) {
    return reachable(ex, id, sandbox, () -> { });
  }

  /** {@link #reachable(Exchange, String, LocalSandbox)}, running {@code beforeRefusal} before a refusal is written. */
  boolean reachable(Exchange ex, @Nullable String id, @Nullable LocalSandbox sandbox, Runnable beforeRefusal) {
    TrafficWake.Outcome outcome = sandbox == null ? TrafficWake.Outcome.FAILED : registry.trafficWake().wake(sandbox);
    if (outcome == TrafficWake.Outcome.AWAKE) {
      return true;
    }
    beforeRefusal.run();
    if (sandbox == null) {
      sandboxMissing(ex, id);
      return false;
    }
    if (outcome == TrafficWake.Outcome.FAILED && registry.find(sandbox.id()).isEmpty()) {
      sandboxMissing(ex, sandbox.id()); // killed meanwhile
      return false;
    }
    ObjectNode body = Json.object();
    body.put("sandboxId", sandbox.id());
    if (outcome == TrafficWake.Outcome.BUSY) {
      body.put("message", "The sandbox is resuming and " + TrafficWake.MAX_WAITING + " requests already wait for it: try again");
      body.put("code", 503);
      ex.response.getHeaders().put("Retry-After", "1");
      ex.json(503, body);
      return false;
    }
    body.put("message", switch (outcome) {
      case FAILED -> "The sandbox is paused, and resuming it for this request failed: connect to it (Sandbox.connect) to resume it";
      default -> !sandbox.lifecycle().autoResume()
          ? "The sandbox is paused: connect to it (Sandbox.connect) to resume it; it was not created with autoResume, so traffic"
              + " does not wake it"
          : "The sandbox is paused with only its filesystem kept: connect to it (Sandbox.connect) to resume it; traffic wakes"
              + " only a pause that kept its memory";
    });
    body.put("code", 502);
    ex.json(502, body);
    return false;
  }

  static boolean tokenMatches(Exchange ex, LocalSandbox sandbox) {
    String token = ex.header("X-Access-Token");
    return token != null && MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        sandbox.envdToken().getBytes(StandardCharsets.UTF_8));
  }
}
