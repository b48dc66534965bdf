package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.secrets.SecretStore;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * E2B's secrets resource: {@code GET}/{@code POST /secrets} (list, create) and {@code GET},
 * {@code POST} (update) and {@code DELETE /secrets/{id or name}}. Every answer is the secret's
 * metadata, never its value; a body that cannot be read is refused with a fixed message that
 * repeats nothing of it (the JSON parser's own message may quote the body).
 */
final class SecretsApi {
  private static final String INVALID = "Invalid secrets request";
  private final SecretStore store;

  SecretsApi(SecretStore store) {
    this.store = store;
  }

  /** A secret as E2B answers it. */
  record View(String secretID, String name, long currentVersion, Map<String, String> metadata, String createdAt, String updatedAt) {
    static View of(SecretStore.Info i) {
      return new View(i.secretID(), i.name(), i.currentVersion(), i.metadata(), i.createdAt().toString(), i.updatedAt().toString());
    }
  }

  void routes(RouteTable.Builder t) {
    t.on("GET", "/secrets", (ex, m) -> list(ex))
        .on("POST", "/secrets", (ex, m) -> create(ex))
        .any("/secrets", (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on /secrets"))
        .on("GET", "/secrets/([^/]+)", (ex, m) -> Bodies.json(ex, 200, View.of(store.get(m.group(1)))))
        .on("POST", "/secrets/([^/]+)", (ex, m) -> update(ex, m.group(1)))
        .on("DELETE", "/secrets/([^/]+)", (ex, m) -> delete(ex, m.group(1)))
        .any("/secrets/([^/]+)", (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on this secret"));
  }

  private void list(Exchange ex) throws RpcError {
    SecretStore.Page page = store.list(Bodies.parseLimit(ex.query("limit")), emptyToNull(ex.query("nextToken")));
    if (page.nextToken() != null) {
      ex.response.getHeaders().put("X-Next-Token", page.nextToken());
    }
    List<View> out = page.secrets().stream().map(View::of).toList();
    Bodies.json(ex, 200, out);
  }

  private void create(Exchange ex) throws RpcError, IOException {
    JsonNode body = body(ex);
    String name = text(body, "name");
    String value = text(body, "value");
    Bodies.json(ex, 201, View.of(store.create(name, value, metadata(body))));
  }

  private void update(Exchange ex, String selector) throws RpcError, IOException {
    JsonNode body = body(ex);
    String value = text(body, "value");
    Bodies.json(ex, 200, View.of(store.update(selector, value, metadata(body))));
  }

  private void delete(Exchange ex, String selector) throws RpcError {
    store.delete(selector);
    ex.empty(204);
  }

  private static JsonNode body(Exchange ex) throws RpcError, IOException {
    try {
      JsonNode node = Json.parse(ex.bodyBytes());
      if (node.isObject()) {
        return node;
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      // refused below, without the parser's message
    }
    throw new RpcError("invalid_argument", INVALID + ": the body must be a JSON object");
  }

  private static String text(JsonNode body, String field) throws RpcError {
    JsonNode v = body.get(field);
    if (v == null || !v.isTextual()) {
      throw new RpcError("invalid_argument", INVALID + ": '" + field + "' must be a string");
    }
    return v.asText();
  }

  /** The metadata given: null when absent or JSON null; an object of strings otherwise. */
  private static @Nullable Map<String, String> metadata(JsonNode body) throws RpcError {
    JsonNode v = body.get("metadata");
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isObject()) {
      throw new RpcError("invalid_argument", INVALID + ": 'metadata' must be an object of strings");
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : v.properties()) {
      if (!e.getValue().isTextual()) {
        throw new RpcError("invalid_argument", INVALID + ": 'metadata' must be an object of strings");
      }
      out.put(e.getKey(), e.getValue().asText());
    }
    return out;
  }

  private static @Nullable String emptyToNull(@Nullable String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
