package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * E2B volumes as the runtime's volumes (Docker volumes on Docker). Each carries labels with its E2B id, name and bearer token, so
 * the set survives a server restart and needs no other bookkeeping. Data written to a volume
 * outlives every sandbox that mounted it.
 */
public final class Volumes {
  static final String LABEL_VOLUME_ID = "io.sandboxes.volume-id";
  static final String LABEL_VOLUME_NAME = "io.sandboxes.volume-name";
  static final String LABEL_VOLUME_TOKEN = "io.sandboxes.volume-token";
  private static final Pattern NAME = Pattern.compile("^[a-zA-Z0-9_-]+$");

  /**
   * A volume as E2B describes it.
   *
   * @param runtimeName the runtime's name of it
   */
  public record Volume(String volumeId, String name, String token, String runtimeName) {}

  private final SandboxEngine engine;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile java.util.function.Consumer<String> beforeRemoval = id -> {};

  /** @param engine the runtime that keeps the volumes */
  public Volumes(SandboxEngine engine) {
    this.engine = engine;
  }

  /** Runs {@code hook} with a volume's id before it is removed (after no sandbox was found mounting it). */
  public void beforeRemoval(java.util.function.Consumer<String> hook) {
    this.beforeRemoval = hook;
  }

  private static Volume of(SandboxEngine.StoredVolume v) {
    Map<String, String> l = v.labels();
    return new Volume(l.get(LABEL_VOLUME_ID), l.get(LABEL_VOLUME_NAME), l.getOrDefault(LABEL_VOLUME_TOKEN, ""), v.name());
  }

  public List<Volume> list() {
    return engine.volumes(List.of(InstanceLabels.OURS + "=true", LABEL_VOLUME_ID)).stream().map(Volumes::of)
        .sorted(Comparator.comparing(Volume::name)).toList();
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
      engine.createVolume(id, labels);
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
    beforeRemoval.accept(volumeId);
    try {
      return engine.removeVolume(v.runtimeName());
    } catch (InUse e) {
      throw new RpcError("already_exists", "volume '" + v.name() + "' is in use: " + e.getMessage());
    }
  }
}
