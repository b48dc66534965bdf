package io.sandboxes.local.internal.http;

import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.Templates;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Listing sandboxes: v2 with state, metadata, template and start-time filters, order and token
 * paging; v1 running sandboxes only, every one at once.
 */
final class SandboxListing {
  private final Registry registry;

  SandboxListing(Registry registry) {
    this.registry = registry;
  }

  void routes(RouteTable.Builder t) {
    t.on("GET", "/sandboxes", (ex, m) -> list(ex, false))
        .on("GET", "/v2/sandboxes", (ex, m) -> list(ex, true));
  }

  private void list(Exchange ex, boolean v2) throws RpcError {
    Map<String, String> filter = parseMetadataFilter(ex.query("metadata"));
    boolean wantRunning = true;
    boolean wantPaused = v2;
    if (v2) {
      String state = ex.query("state");
      if (state != null && !state.isBlank()) {
        List<String> states = List.of(state.split(","));
        for (String st : states) {
          if (!st.equals("running") && !st.equals("paused")) {
            throw new RpcError("invalid_argument", "unknown state '" + st + "'");
          }
        }
        wantRunning = states.contains("running");
        wantPaused = states.contains("paused");
      }
    }
    int limit = v2 ? Bodies.parseLimit(ex.query("limit")) : 100;
    boolean ascending = v2 && ascending(ex.query("order"));
    Instant startedAfter = v2 ? parseInstant(ex.query("startedAfter"), "startedAfter") : null;
    String template = v2 ? ex.query("template") : null;
    List<LocalSandbox> rows = new ArrayList<>();
    for (LocalSandbox s : registry.list()) {
      boolean stateMatches = s.paused() ? wantPaused : wantRunning;
      if (stateMatches && s.metadata().entrySet().containsAll(filter.entrySet())
          && (startedAfter == null || !s.startedAt().isBefore(startedAfter))
          && (template == null || template.isEmpty() || sameTemplate(s.templateId(), template)
              || sameTemplate(s.reportedTemplateId(), template))) {
        rows.add(s);
      }
    }
    // the order applies to the whole result, before paging; the token is a position in that order
    rows.sort(Comparator.comparing(s -> cursorOf(s, ascending)));
    int from = 0;
    String token = v2 ? ex.query("nextToken") : null;
    if (token != null && !token.isEmpty()) {
      String cursor = decodeToken(token);
      if (!cursor.startsWith(ascending ? "a" : "d")) {
        throw new RpcError("invalid_argument", "nextToken belongs to a listing in the other order");
      }
      while (from < rows.size() && cursorOf(rows.get(from), ascending).compareTo(cursor) <= 0) {
        from++;
      }
    }
    int to = v2 ? Math.min(rows.size(), from + limit) : rows.size();
    List<SandboxViews.Listed> out = rows.subList(from, to).stream().map(SandboxViews::listed).toList();
    if (to < rows.size()) {
      ex.response.getHeaders().put("X-Next-Token", Base64.getUrlEncoder().withoutPadding()
          .encodeToString(cursorOf(rows.get(to - 1), ascending).getBytes(StandardCharsets.UTF_8)));
    }
    ex.response.getHeaders().put("X-Total-Running", Long.toString(registry.list().stream().filter(x -> !x.paused()).count()));
    Bodies.json(ex, 200, out);
  }

  /** E2B's {@code OrderDirection}: {@code desc} (newest first, the default) or {@code asc}. */
  private static boolean ascending(@Nullable String order) throws RpcError {
    if (order == null || order.isEmpty() || order.equals("desc")) {
      return false;
    }
    if (order.equals("asc")) {
      return true;
    }
    throw new RpcError("invalid_argument", "order must be 'asc' or 'desc', got '" + order + "'");
  }

  private static @Nullable Instant parseInstant(@Nullable String raw, String field) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(raw).toInstant();
    } catch (DateTimeParseException e) {
      throw new RpcError("invalid_argument", "'" + field + "' must be an RFC 3339 date-time, got '" + raw + "'");
    }
  }

  /** A template filter names a template by id or alias: {@code base}, or a snapshot as {@code name} or {@code name:default}. */
  private static boolean sameTemplate(String templateId, String wanted) {
    return canonicalTemplate(templateId).equals(canonicalTemplate(wanted));
  }

  private static String canonicalTemplate(String id) {
    return id.equals(Templates.BASE) || id.contains(":") ? id : id + ":default";
  }

  /**
   * A sandbox's place in the listing: its start time (descending for newest first, ascending for
   * {@code asc}), then its id. The page token is the last row's place.
   */
  private static String cursorOf(LocalSandbox s, boolean ascending) {
    long nanos = s.startedAt().getEpochSecond() * 1_000_000_000L + s.startedAt().getNano();
    return String.format("%s%020d__%s", ascending ? "a" : "d", ascending ? nanos : Long.MAX_VALUE - nanos, s.id());
  }

  private static String decodeToken(String token) throws RpcError {
    try {
      return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", "invalid nextToken");
    }
  }

  /**
   * The SDKs encode the filter in layers: each key and value, then the joined form string, then
   * the query parameter. Jetty has undone the last; this undoes the other two, as E2B's API does.
   */
  static Map<String, String> parseMetadataFilter(@Nullable String raw) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    try {
      String form = URLDecoder.decode(raw, StandardCharsets.UTF_8);
      for (String pair : form.split("&")) {
        String[] kv = pair.split("=", -1);
        if (kv.length != 2) {
          throw new RpcError("invalid_argument", "invalid metadata filter '" + raw + "'");
        }
        out.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8), URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
      }
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", "invalid metadata filter '" + raw + "'");
    }
    return out;
  }
}
