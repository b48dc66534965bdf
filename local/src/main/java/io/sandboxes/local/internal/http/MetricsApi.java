package io.sandboxes.local.internal.http;

import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Metrics;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** A sandbox's metrics ({@code GET /sandboxes/{id}/metrics}) and its logs ({@code GET /v2/sandboxes/{id}/logs}). */
final class MetricsApi {
  private final Registry registry;
  private final Lookup lookup;

  MetricsApi(Registry registry, Lookup lookup) {
    this.registry = registry;
    this.lookup = lookup;
  }

  void routes(RouteTable.Builder t) {
    t.on("GET", "/sandboxes/([^/]+)/metrics", (ex, m) -> Bodies.json(ex, 200, metrics(ex, lookup.find(m.group(1)))))
        .on("GET", "/v2/sandboxes/([^/]+)/logs", (ex, m) -> Bodies.json(ex, 200, logs(ex, lookup.find(m.group(1)))));
  }

  /** E2B's {@code SandboxMetric}. */
  record Sample(String timestamp, long timestampUnix, int cpuCount, double cpuUsedPct, long memUsed, long memTotal, long memCache,
      long diskUsed, long diskTotal) {}

  /** E2B's {@code SandboxLogsV2Response}. */
  record Logs(List<LogEntry> logs) {}

  /** One log line; E2B's structured fields are always empty here. */
  record LogEntry(String timestamp, String level, String message, Map<String, String> fields) {}

  /** E2B's metrics range: Unix seconds, both ends included; by default the sandbox's whole life so far. */
  private List<Sample> metrics(Exchange ex, LocalSandbox s) throws RpcError {
    long start = seconds(ex.query("start"), "start", s.startedAt().getEpochSecond());
    // no end: up to the present, a sample taken for this answer included
    long end = seconds(ex.query("end"), "end", Long.MAX_VALUE);
    if (start > end) {
      throw new RpcError("invalid_argument", "start (" + start + ") must not be after end (" + end + ")");
    }
    List<Sample> out = new ArrayList<>();
    for (Metrics.Sample m : registry.metrics(s, start, end)) {
      out.add(new Sample(m.at().toString(), m.at().getEpochSecond(), s.cpuCount(), m.cpuUsedPct(), m.memUsed(), m.memTotal(),
          m.memCache(), m.diskUsed(), m.diskTotal()));
    }
    return out;
  }

  private static long seconds(@Nullable String raw, String field, long fallback) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return fallback;
    }
    try {
      long v = Long.parseLong(raw);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "'" + field + "' must be a non-negative Unix time in seconds, got '" + raw + "'");
  }

  private static Logs logs(Exchange ex, LocalSandbox s) throws RpcError {
    int limit = 1000;
    String raw = ex.query("limit");
    if (raw != null) {
      try {
        limit = Integer.parseInt(raw);
      } catch (NumberFormatException e) {
        throw new RpcError("invalid_argument", "limit must be a number from 1 to 1000");
      }
      if (limit < 1 || limit > 1000) {
        throw new RpcError("invalid_argument", "limit must be a number from 1 to 1000");
      }
    }
    String cursor = ex.query("cursor");
    long from = 0;
    if (cursor != null && !cursor.isEmpty()) {
      try {
        from = Long.parseLong(cursor);
      } catch (NumberFormatException e) {
        throw new RpcError("invalid_argument", "cursor must be Unix milliseconds");
      }
    }
    boolean backward = "backward".equals(ex.query("direction"));
    String level = ex.query("level");
    String search = ex.query("search");
    List<LocalSandbox.LogLine> lines = new ArrayList<>(s.logLines());
    if (backward) {
      Collections.reverse(lines);
    }
    List<LogEntry> logs = new ArrayList<>();
    for (LocalSandbox.LogLine l : lines) {
      long ms = l.timestamp().toEpochMilli();
      if (cursor != null && !cursor.isEmpty() && (backward ? ms > from : ms < from)) {
        continue;
      }
      if (level != null && !level.isEmpty() && !level.equals(l.level())) {
        continue;
      }
      if (search != null && !search.isEmpty() && !l.message().contains(search)) {
        continue;
      }
      if (logs.size() >= limit) {
        break;
      }
      logs.add(new LogEntry(l.timestamp().toString(), l.level(), l.message(), Map.of()));
    }
    return new Logs(logs);
  }
}
