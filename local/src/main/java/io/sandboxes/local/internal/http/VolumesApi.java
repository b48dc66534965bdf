package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.Volumes;
import java.io.IOException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** The volumes resource: list, create, get and delete. */
final class VolumesApi {
  private final Registry registry;
  private final Volumes volumes;

  VolumesApi(Registry registry, Volumes volumes) {
    this.registry = registry;
    this.volumes = volumes;
  }

  /** A volume as a listing shows it. */
  record Listed(String volumeID, String name) {}

  /** A volume with the token that mounts it. */
  record Detail(String volumeID, String name, String token) {}

  void routes(RouteTable.Builder t) {
    t.on("GET", "/volumes", (ex, m) -> Bodies.json(ex, 200, list()))
        .on("POST", "/volumes", (ex, m) -> create(ex))
        .any("/volumes", (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on /volumes"))
        .on("GET", "/volumes/(.*)", (ex, m) -> get(ex, m.group(1)))
        .on("DELETE", "/volumes/(.*)", (ex, m) -> delete(ex, m.group(1)))
        .any("/volumes/(.*)", (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on " + ex.path()));
  }

  private List<Listed> list() {
    return volumes.list().stream().map(v -> new Listed(v.volumeId(), v.name())).toList();
  }

  /** {@code POST /volumes}: the name, any value read as its text (the volumes check it). */
  record CreateBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String name) {}

  private void create(Exchange ex) throws RpcError, IOException {
    CreateBody body = RequestBody.read(ex, CreateBody.class);
    Volumes.Volume v = volumes.create(body.name());
    Bodies.json(ex, 201, new Detail(v.volumeId(), v.name(), v.token()));
  }

  private void get(Exchange ex, String volumeId) throws RpcError {
    Volumes.Volume v = volumes.byId(volumeId).orElseThrow(() -> new RpcError("not_found", "volume '" + volumeId + "' not found"));
    Bodies.json(ex, 200, new Detail(v.volumeId(), v.name(), v.token()));
  }

  private void delete(Exchange ex, String volumeId) throws RpcError {
    if (!volumes.delete(volumeId,
        registry.listOnceRemoved(s -> s.volumeMounts().stream().anyMatch(m -> m.volumeId().equals(volumeId))))) {
      throw new RpcError("not_found", "volume '" + volumeId + "' not found");
    }
    ex.empty(204);
  }
}
