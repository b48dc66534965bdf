package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The control plane's request and answer helpers: its JSON bodies, its error shape
 * {@code {code, message}}, and the checks its fields and query parameters share.
 */
final class Bodies {
  /** The longest lifetime a sandbox may be given, as E2B's paid plans allow: 24 hours. */
  static final Duration MAX_TIMEOUT = Duration.ofHours(24);

  private Bodies() {}

  static void error(Exchange ex, int status, String message) {
    ex.json(status, Json.object().put("code", status).put("message", message));
  }

  /** Answers with a record (or list of them) as JSON, absent values left out. */
  static void json(Exchange ex, int status, Object body) {
    ex.json(status, Json.MAPPER.valueToTree(body));
  }

  /** A request body that must be a JSON object; an empty body reads as {@code {}}. */
  static JsonNode readJson(Exchange ex) throws RpcError, IOException {
    byte[] raw = ex.bodyBytes();
    try {
      JsonNode node = Json.parse(raw);
      if (!node.isObject()) {
        throw new RpcError("invalid_argument", "request body must be a JSON object");
      }
      return node;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new RpcError("invalid_argument", "request body is not valid JSON: " + e.getOriginalMessage());
    }
  }

  /**
   * A bound number of seconds, {@code fallback}
   * when absent (required when there is none), never negative, at most {@link #MAX_TIMEOUT}.
   */
  static long seconds(@Nullable Long value, String field, @Nullable Long fallback) throws RpcError {
    if (value == null) {
      if (fallback != null) {
        return fallback;
      }
      throw new RpcError("invalid_argument", "'" + field + "' is required");
    }
    if (value < 0) {
      throw new RpcError("invalid_argument", "'" + field + "' must be a non-negative number of seconds");
    }
    if (value > MAX_TIMEOUT.toSeconds()) {
      throw new RpcError("invalid_argument", "Timeout cannot be greater than " + MAX_TIMEOUT.toHours() + " hours");
    }
    return value;
  }

  /** A page size from 1 to 100, 100 when absent. */
  static int parseLimit(@Nullable String raw) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return 100;
    }
    try {
      int limit = Integer.parseInt(raw);
      if (limit >= 1 && limit <= 100) {
        return limit;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "limit must be a number from 1 to 100");
  }

  /** A query parameter as a whole number in a range, {@code fallback} when absent. */
  static int number(@Nullable String raw, String field, int min, int max, int fallback) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return fallback;
    }
    try {
      int v = Integer.parseInt(raw);
      if (v >= min && v <= max) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "'" + field + "' must be a number from " + min + " to " + max + ", got '" + raw + "'");
  }
}
