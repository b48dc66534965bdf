package io.sandboxes.e2b;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeQuery;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The seed's volume contract ({@link io.sandboxes.VolumeManagement}) for {@link E2BSandboxProvider},
 * on E2B's volume API, which knows volumes by id: each name is looked up in the account's listing.
 */
final class VolumesByName {
  private VolumesByName() {}

  static Optional<VolumeInfo> find(E2BApi api, String name) {
    return api.listVolumes().stream().filter(v -> v.name().equals(name)).findFirst();
  }

  /** Creates the volume unless it exists; a 409 for a name that then exists is that same outcome. */
  static void create(E2BApi api, String name) {
    if (find(api, name).isPresent()) {
      return;
    }
    try {
      api.createVolume(name);
    } catch (SandboxApiException e) {
      if (e.statusCode() != 409 || find(api, name).isEmpty()) {
        throw e;
      }
    }
  }

  static void remove(E2BApi api, String name) {
    Optional<VolumeInfo> v = find(api, name);
    if (v.isPresent()) {
      api.deleteVolume(v.get().volumeId());
    }
  }

  /** The volumes the query selects, each marked attached when a running or paused sandbox mounts it. */
  static List<VolumeDescriptor> list(E2BApi api, VolumeQuery query) {
    List<VolumeInfo> volumes = api.listVolumes();
    Set<String> mounted = new HashSet<>();
    for (SandboxInfo s : api.listAll(SandboxQuery.all())) {
      s.volumeMounts().forEach(m -> mounted.add(m.volume()));
    }
    List<VolumeDescriptor> out = new ArrayList<>();
    for (VolumeInfo v : volumes) {
      if (query.namePrefix() != null && !v.name().startsWith(query.namePrefix())) {
        continue;
      }
      boolean attached = mounted.contains(v.name());
      if (query.attached() != null && query.attached() != attached) {
        continue;
      }
      out.add(new VolumeDescriptor(v.name(), v.volumeId(), attached, null, null));
    }
    return out;
  }
}
