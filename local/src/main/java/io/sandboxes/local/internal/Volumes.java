package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.docker.DockerSandboxEngine;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * E2B volumes as Docker volumes. Each carries labels with its E2B id, name and bearer token, so
 * the set survives a server restart and needs no other bookkeeping. Data written to a volume
 * outlives every sandbox that mounted it.
 */
public final class Volumes {
  static final String LABEL_VOLUME_ID = "io.sandboxes.volume-id";
  static final String LABEL_VOLUME_NAME = "io.sandboxes.volume-name";
  static final String LABEL_VOLUME_TOKEN = "io.sandboxes.volume-token";
  private static final Pattern NAME = Pattern.compile("^[a-zA-Z0-9_-]+$");

  /** A volume as E2B describes it. */
  public record Volume(String volumeId, String name, String token, String dockerName) {}

  private final DockerRuntime docker;
  private final ReentrantLock lock = new ReentrantLock();

  public Volumes(DockerRuntime docker) {
    this.docker = docker;
  }

  private static Volume of(InspectVolumeResponse v) {
    Map<String, String> l = v.getLabels();
    return new Volume(l.get(LABEL_VOLUME_ID), l.get(LABEL_VOLUME_NAME), l.getOrDefault(LABEL_VOLUME_TOKEN, ""), v.getName());
  }

  public List<Volume> list() {
    List<InspectVolumeResponse> all = docker.client().listVolumesCmd()
        .withFilter("label", List.of(InstanceLabels.OURS + "=true", LABEL_VOLUME_ID)).exec().getVolumes();
    if (all == null) {
      return List.of();
    }
    return all.stream().map(Volumes::of).sorted(Comparator.comparing(Volume::name)).toList();
  }

  public Optional<Volume> byId(String volumeId) {
    return list().stream().filter(v -> v.volumeId().equals(volumeId)).findFirst();
  }

  public Optional<Volume> byName(String name) {
    return list().stream().filter(v -> v.name().equals(name)).findFirst();
  }

  /** Creates a volume; a name already taken is a conflict. */
  public Volume create(String name) throws RpcError {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new RpcError("invalid_argument", "volume name must match ^[a-zA-Z0-9_-]+$, got '" + name + "'");
    }
    lock.lock();
    try {
      if (byName(name).isPresent()) {
        throw new RpcError("already_exists", "volume '" + name + "' already exists");
      }
      String id = Registry.newSandboxId();
      Map<String, String> labels = new HashMap<>();
      labels.put(InstanceLabels.OURS, "true");
      labels.put(LABEL_VOLUME_ID, id);
      labels.put(LABEL_VOLUME_NAME, name);
      labels.put(LABEL_VOLUME_TOKEN, Registry.newToken());
      String dockerName = DockerSandboxEngine.VOLUME_PREFIX + id;
      docker.client().createVolumeCmd().withName(dockerName).withLabels(labels).exec();
      return byId(id).orElseThrow(() -> new RpcError("internal", "volume " + name + " vanished right after it was created"));
    } finally {
      lock.unlock();
    }
  }

  /** @return false when there was no such volume */
  public boolean delete(String volumeId, List<LocalSandbox> sandboxes) throws RpcError {
    Volume v = byId(volumeId).orElse(null);
    if (v == null) {
      return false;
    }
    for (LocalSandbox s : sandboxes) {
      if (s.volumeMounts().stream().anyMatch(m -> m.volumeId().equals(volumeId))) {
        throw new RpcError("already_exists", "volume '" + v.name() + "' is mounted by sandbox " + s.id());
      }
    }
    try {
      docker.client().removeVolumeCmd(v.dockerName()).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (ConflictException e) {
      throw new RpcError("already_exists", "volume '" + v.name() + "' is in use: " + e.getMessage());
    }
  }
}
