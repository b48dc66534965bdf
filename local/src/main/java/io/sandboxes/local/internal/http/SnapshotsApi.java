package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.Templates;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The snapshots resource: take one ({@code POST /sandboxes/{id}/snapshots}), list them, and the
 * template routes that reach snapshots and {@code base} (alias lookup and delete) once the built
 * templates' own routes have declined.
 */
final class SnapshotsApi {
  private final Registry registry;
  private final Lookup lookup;

  SnapshotsApi(Registry registry, Lookup lookup) {
    this.registry = registry;
    this.lookup = lookup;
  }

  /** E2B's {@code SnapshotInfo}. */
  record Snapshot(String snapshotID, List<String> names) {}

  /** What an alias lookup answers. */
  record Alias(String templateID, @com.fasterxml.jackson.annotation.JsonProperty("public") boolean shared) {}

  void routes(RouteTable.Builder t) {
    t.on("POST", "/sandboxes/([^/]+)/snapshots", (ex, m) -> take(ex, m.group(1)))
        .on("GET", "/snapshots", (ex, m) -> list(ex))
        .on("GET", "/templates/aliases/(.*)", (ex, m) -> alias(ex, decode(m.group(1))))
        .on("DELETE", "/templates/(.*)", (ex, m) -> delete(ex, decode(m.group(1))));
  }

  /** {@code POST /sandboxes/{id}/snapshots}: the name, any value read as its text (the templates check it). */
  record TakeBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String name) {}

  private void take(Exchange ex, String id) throws RpcError, IOException {
    TakeBody body = RequestBody.read(ex, TakeBody.class);
    Templates.Snapshot snap = registry.templates().snapshot(lookup.find(id), body.name(), registry.list());
    Bodies.json(ex, 201, view(snap));
  }

  private void delete(Exchange ex, String templateId) throws RpcError {
    if (!registry.templates().delete(templateId, registry.listOnceRemoved(Registry::madeFromATemplate))) {
      throw new RpcError("not_found", "template '" + templateId + "' not found");
    }
    registry.sweepForkImages(); // a snapshot of a fork held that fork's image
    ex.empty(204);
  }

  /**
   * E2B's alias lookup ({@code Template.exists} in the SDKs): {@code base} is public; a snapshot is
   * found by its name or its id and belongs to the team. Built templates are answered before this.
   */
  private void alias(Exchange ex, String alias) throws RpcError {
    if (alias.isEmpty() || alias.contains("/")) {
      throw new RpcError("invalid_argument", "invalid template alias '" + alias + "'");
    }
    if (alias.equals(Templates.BASE)) {
      Bodies.json(ex, 200, new Alias(Templates.BASE, true));
      return;
    }
    Templates.Snapshot snap = registry.templates().find(alias)
        .orElseThrow(() -> new RpcError("not_found", "template alias '" + alias + "' not found"));
    Bodies.json(ex, 200, new Alias(snap.snapshotId(), false));
  }

  private static Snapshot view(Templates.Snapshot snap) {
    return new Snapshot(snap.snapshotId(), List.of(snap.snapshotId()));
  }

  private void list(Exchange ex) throws RpcError {
    String sandboxId = ex.query("sandboxID");
    String name = ex.query("name");
    int limit = Bodies.parseLimit(ex.query("limit"));
    List<Templates.Snapshot> rows = new ArrayList<>();
    for (Templates.Snapshot s : registry.templates().list()) {
      if (sandboxId != null && !sandboxId.isEmpty() && !sandboxId.equals(s.sourceSandboxId())) {
        continue;
      }
      if (name != null && !name.isEmpty() && !s.name().equals(name) && !s.snapshotId().equals(name)
          && !s.snapshotId().equals(name + ":default")) {
        continue;
      }
      rows.add(s);
    }
    int from = 0;
    String token = ex.query("nextToken");
    if (token != null && !token.isEmpty()) {
      try {
        from = Integer.parseInt(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new RpcError("invalid_argument", "invalid nextToken");
      }
    }
    from = Math.min(Math.max(from, 0), rows.size());
    int to = Math.min(rows.size(), from + limit);
    List<Snapshot> out = rows.subList(from, to).stream().map(SnapshotsApi::view).toList();
    if (to < rows.size()) {
      ex.response.getHeaders().put("X-Next-Token",
          Base64.getUrlEncoder().withoutPadding().encodeToString(Integer.toString(to).getBytes(StandardCharsets.UTF_8)));
    }
    Bodies.json(ex, 200, out);
  }

  static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
