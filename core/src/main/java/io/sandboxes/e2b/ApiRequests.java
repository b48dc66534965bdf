package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.internal.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Builds what {@link E2BApi} sends: the create request's body, and the checks and conversions of
 * its arguments (whole seconds, positive durations, aliases, Unix seconds). Nothing here sends.
 */
final class ApiRequests {
  private ApiRequests() {}

  /** The body of {@code POST /v2/sandboxes} for a spec: template, timeout, lifecycle, metadata, env, mounts, network. */
  static ObjectNode createBody(SandboxSpec spec) {
    ObjectNode body = Json.object()
        .put("templateID", spec.template())
        .put("timeout", seconds(spec.timeout()));
    if (spec.onTimeout() != OnTimeout.KILL) {
      body.put("autoPause", true);
      body.put("autoPauseMemory", spec.onTimeout() == OnTimeout.PAUSE);
    }
    if (spec.autoResume()) {
      body.putObject("autoResume").put("enabled", true);
    }
    body.set("metadata", Json.toObject(spec.metadata()));
    body.set("envVars", Json.toObject(spec.env()));
    if (!spec.volumes().isEmpty()) {
      ArrayNode mounts = body.putArray("volumeMounts");
      spec.volumes().forEach(v -> mounts.addObject().put("name", v.volume()).put("path", v.path()));
    }
    if (spec.network() != null) {
      NetworkWire.putCreate(body, spec.network());
    }
    return body;
  }

  /** Whole seconds, a fraction rounded up. */
  static long seconds(Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  static void requirePositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
  }

  static String requireAlias(String alias) {
    Objects.requireNonNull(alias, "alias");
    if (alias.isBlank()) {
      throw new IllegalArgumentException("alias must not be blank");
    }
    return alias;
  }

  /** Unix seconds, rounded half up from the millisecond as E2B's SDK rounds. */
  static @Nullable Long unixSeconds(@Nullable Instant at) {
    return at == null ? null : Math.floorDiv(at.toEpochMilli() + 500, 1000L);
  }
}
