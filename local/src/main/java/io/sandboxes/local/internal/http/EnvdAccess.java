package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether an envd request may reach its sandbox: the sandbox is there and awake (a paused one
 * with {@code autoResume} is woken), the access token matches; and E2B's proxy's 502 when not.
 */
final class EnvdAccess {
  private static final Logger LOG = LoggerFactory.getLogger(EnvdHandler.class);

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
   * The answer for a sandbox that cannot take the call: 502, as E2B's proxy answers, whose message
   * says "paused" for a sandbox that is there but paused (E2B's says "not found" for both; the
   * status stays, so E2B's SDKs read it as they read E2B's).
   */
  void unreachable(Exchange ex, @Nullable String id, @Nullable LocalSandbox sandbox) {
    if (sandbox == null || !sandbox.paused()) {
      sandboxMissing(ex, id);
      return;
    }
    ObjectNode body = Json.object();
    body.put("sandboxId", sandbox.id());
    body.put("message", sandbox.lifecycle().autoResume()
        ? "The sandbox is paused, and resuming it for this call failed: connect to it (Sandbox.connect) to resume it"
        : "The sandbox is paused: connect to it (Sandbox.connect) to resume it; it was not created with autoResume, so a call"
            + " does not wake it");
    body.put("code", 502);
    ex.json(502, body);
  }

  /** A paused sandbox answers only when it resumes on traffic ({@code autoResume}). */
  boolean awake(LocalSandbox sandbox) {
    if (!sandbox.paused()) {
      return true;
    }
    if (!sandbox.lifecycle().autoResume()) {
      return false;
    }
    try {
      registry.resume(sandbox, Duration.ofSeconds(sandbox.lifecycle().timeoutSeconds()));
      return true;
    } catch (RpcError e) {
      LOG.warn("automatic resume of sandbox {} failed: {}", sandbox.id(), e.getMessage());
      return false;
    }
  }

  static boolean tokenMatches(Exchange ex, LocalSandbox sandbox) {
    String token = ex.header("X-Access-Token");
    return token != null && MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        sandbox.envdToken().getBytes(StandardCharsets.UTF_8));
  }
}
