package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.StructuredLog;
import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.runtime.DaemonLink;
import io.sandboxes.local.internal.runtime.Instance;
import io.sandboxes.local.internal.runtime.InstanceState;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery after a restart: a server started with the id of an earlier one finds that one's
 * sandboxes again from their containers' labels and their state files, and reports each as what
 * Docker now shows it to be: a frozen container is paused, a running one runs, a stopped one is
 * paused when this server paused it: a filesystem-only pause stopped it, or a memory-keeping
 * pause froze it and a Docker restart stopped it (its memory is lost, its files are not: it stays
 * paused, filesystem only, and a resume boots it from its files). Anything else (a running
 * sandbox stopped from outside, a create that was never answered, a pool member nobody claimed,
 * a killed sandbox whose removal the stop cut short) is removed.
 */
final class SandboxRecovery {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final Map<String, LocalSandbox> sandboxes;
  private final SandboxEngine engine;
  private final String serverId;
  private final StateFiles states;
  private final Path stateDir;
  private final SandboxNetworking networking;
  private final OutsideEvents outside;
  private final ForkImages forkImages;
  private final int diskSizeMB;
  private final ClaimedNames names;

  SandboxRecovery(Map<String, LocalSandbox> sandboxes, SandboxEngine engine, String serverId, StateFiles states,
      SandboxNetworking networking, OutsideEvents outside, ForkImages forkImages, int diskSizeMB, ClaimedNames names) {
    this.sandboxes = sandboxes;
    this.names = names;
    this.engine = engine;
    this.serverId = serverId;
    this.states = states;
    this.stateDir = states.dir();
    this.networking = networking;
    this.outside = outside;
    this.forkImages = forkImages;
    this.diskSizeMB = diskSizeMB;
  }

  /**
   * Takes back this server's containers: each becomes its sandbox again, as Docker now shows it,
   * or is removed when nobody holds it; the state of sandboxes whose container is gone goes too.
   */
  void recover() {
    List<Instance> ours;
    try {
      ours = engine.instances(Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId));
    } catch (RuntimeException e) {
      LOG.warn("could not list this server's containers to take them back: {}", e.toString());
      return;
    }
    java.util.Set<String> withContainer = new java.util.HashSet<>();
    for (Instance c : ours) {
      Map<String, String> labels = c.labels();
      String id = labels.get(InstanceLabels.SANDBOX_ID);
      boolean pooled = false;
      if (id == null || id.isEmpty()) {
        if (!"true".equals(labels.get(WarmPool.LABEL_POOL))) {
          continue;
        }
        // a pool member: its id is only in its name; a state file says it was claimed
        id = memberId(c);
        if (id == null) {
          LOG.warn("removing warm pool container {} with an unexpected name", c.id());
          engine.remove(c.id());
          continue;
        }
        pooled = true;
      }
      withContainer.add(id);
      try {
        adopt(c, labels, id, pooled);
      } catch (RuntimeException | IOException e) {
        LOG.warn("could not take back sandbox {} (container {}): {}", id, c.id(), e.toString());
      }
    }
    forgetRemoved(withContainer);
    forkImages.sweep();
  }

  /**
   * The state a sandbox left whose container was removed while no server watched (by hand, or by
   * a cleanup): nothing to take back, so its state file and daemon folder go.
   */
  private void forgetRemoved(java.util.Set<String> withContainer) {
    if (!Files.isDirectory(stateDir)) {
      return;
    }
    try (java.util.stream.Stream<Path> files = Files.list(stateDir)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        if (!name.endsWith(".json") || !Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        String id = name.substring(0, name.length() - ".json".length());
        if (!withContainer.contains(id) && id.matches("[a-z0-9]{20}")) {
          LOG.info("sandbox {} is gone: its container was removed while the server was down", id);
          states.forget(id);
          engine.discardDaemon(id);
        }
      }
    } catch (IOException e) {
      LOG.debug("could not look for the state of removed sandboxes in {}: {}", stateDir, e.toString());
    }
  }

  /** The sandbox id in a pool container's name ({@code sandboxes-pool-<id>} or, once claimed, {@code sandboxes-<id>}). */
  private static @Nullable String memberId(Instance c) {
    List<String> names = c.names();
    for (String name : names) {
      String id = name.startsWith(WarmPool.NAME_PREFIX) ? name.substring(WarmPool.NAME_PREFIX.length())
          : name.startsWith("sandboxes-") ? name.substring("sandboxes-".length()) : null;
      if (id != null && id.matches("[a-z0-9]{20}")) {
        return id;
      }
    }
    return null;
  }

  private void adopt(Instance c, Map<String, String> labels, String id, boolean pooled) throws IOException {
    InstanceState instance = engine.state(c.id());
    if (instance.gone()) {
      states.forget(id);
      return;
    }
    String runtimeState = instance.status();
    InstanceState.Phase phase = instance.phase();
    JsonNode state = states.read(id);
    if (state != null && state.path(StateFiles.KILLED).asBoolean(false)) {
      // killed, and the server stopped before its removal was over: it finishes now, never comes back
      LOG.info("sandbox {} was killed and its removal cut short; removing its container", id);
      engine.remove(c.id());
      forkImages.release(labels.get(Registry.LABEL_FORK_IMAGE));
      engine.discardDaemon(labels);
      states.forget(id);
      return;
    }
    if (pooled && (state == null || !state.path("pooled").asBoolean(false))) {
      // a pool member nobody claimed (or whose claim never committed): nobody holds it
      LOG.info("removing unclaimed warm pool member {} left by an earlier run", id);
      engine.remove(c.id());
      engine.discardDaemon(labels);
      states.forget(id);
      return;
    }
    // where its identity is: the labels of a cold sandbox, the state file of a claimed pool member
    Map<String, String> identity = new HashMap<>(labels);
    if (pooled) {
      identity.put(Registry.LABEL_LIFECYCLE, Json.string(state.path("lifecycle")));
      identity.put(InstanceLabels.TEMPLATE, state.path("template").asText("base"));
      identity.put(InstanceLabels.ENVD_TOKEN, state.path("envdToken").asText(""));
      identity.put(InstanceLabels.METADATA, Json.string(state.path("metadata")));
      identity.put("io.sandboxes.env", Json.string(state.path("envVars")));
      identity.put(InstanceLabels.STARTED, state.path("startedAt").asText(Instant.now().toString()));
      identity.put(Registry.LABEL_VOLUMES, "[]");
      identity.remove(InstanceLabels.DEADLINE);
    }
    labels = identity;
    if (state == null && !Files.exists(states.file(id))) {
      // no state file: the create never committed (the server stopped before answering it), so
      // nobody holds this sandbox; it is removed, not brought back to live out its deadline
      LOG.warn("sandbox {} was never answered (its server stopped while creating it); removing its container", id);
      engine.remove(c.id());
      engine.discardDaemon(labels);
      return;
    }
    JsonNode lc = Json.parse(labels.getOrDefault(Registry.LABEL_LIFECYCLE, "{}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    LocalSandbox.Lifecycle lifecycle = new LocalSandbox.Lifecycle(lc.path("pauseOnTimeout").asBoolean(false),
        lc.path("autoPauseMemory").asBoolean(true), lc.path("autoResume").asBoolean(false), lc.path("timeoutSeconds").asLong(300));
    Instant endAt = state != null && state.has("endAt") ? Instant.parse(state.get("endAt").asText())
        : Instant.parse(labels.getOrDefault(InstanceLabels.DEADLINE, Instant.now().toString()));
    boolean recordedPause = state != null && state.path("paused").asBoolean(false);
    boolean recordedMemory = state != null && state.path("memoryKept").asBoolean(false);
    Boolean pausedNow = null;
    switch (phase) {
      case RUNNING -> pausedNow = false;
      case FROZEN -> pausedNow = true;
      case STOPPED -> {
        // paused by this server: a filesystem-only pause stopped it; a memory-keeping pause was
        // frozen, and a Docker restart stopped it, losing its memory but not its files
        if (recordedPause) {
          pausedNow = true;
        }
      }
      default -> { }
    }
    if (pausedNow == null) {
      LOG.warn("sandbox {} is gone: its container is '{}'; removing it", id, runtimeState);
      engine.remove(c.id());
      forkImages.release(labels.get(Registry.LABEL_FORK_IMAGE));
      states.forget(id);
      engine.discardDaemon(labels);
      return;
    }
    DaemonLink link = engine.reopenDaemon(labels);
    SandboxDaemon daemon = null;
    if (link == null) {
      LOG.warn("sandbox {} was made without the in-sandbox daemon; its process and file calls will fail", id);
    } else {
      daemon = new SandboxDaemon(link);
    }
    LocalSandbox s = new LocalSandbox(id, c.id(), labels.getOrDefault(InstanceLabels.TEMPLATE, "base"),
        labels.getOrDefault(InstanceLabels.ENVD_TOKEN, ""),
        Json.stringMap(Json.parse(labels.getOrDefault(InstanceLabels.METADATA, "{}").getBytes(java.nio.charset.StandardCharsets.UTF_8))),
        Json.stringMap(Json.parse(labels.getOrDefault("io.sandboxes.env", "{}").getBytes(java.nio.charset.StandardCharsets.UTF_8))),
        Instant.parse(labels.getOrDefault(InstanceLabels.STARTED, Instant.now().toString())), endAt,
        Registry.CPU_COUNT, Registry.MEMORY_MB, diskFromLabel(labels), lifecycle, mountsFromLabel(labels.getOrDefault(Registry.LABEL_VOLUMES, "[]")), engine, daemon);
    s.proxyVars(networking.proxyVars());
    if (pooled) {
      s.markPooled();
      if (c.names().stream().anyMatch(n -> n.startsWith(WarmPool.NAME_PREFIX))) {
        names.renameNow(c.id(), id); // claimed, and its server ended before the rename
      }
    }
    boolean memoryLost = pausedNow && recordedMemory && phase == InstanceState.Phase.STOPPED;
    if (pausedNow) {
      s.markPaused(phase == InstanceState.Phase.FROZEN);
    }
    if (memoryLost) {
      s.log("warn", OutsideEvents.MEMORY_LOST);
      StructuredLog.atWarn(LOG).addKeyValue("event", "sandbox.pause-memory-lost").addKeyValue("sandbox", id)
          .log("a paused sandbox's memory did not survive a Docker restart; its files did, and it stays paused");
    }
    if (daemon != null && (!pausedNow || phase == InstanceState.Phase.FROZEN)) {
      s.processesToTakeBack(); // a stopped container's processes are gone; a running or frozen one's run on
    }
    if (state != null && (state.has("network") || state.has("allowInternetAccess"))) {
      s.network(state.has("network") ? Json.MAPPER.treeToValue(state.get("network"), NetworkPolicy.class) : null,
          state.has("allowInternetAccess") ? state.get("allowInternetAccess").asBoolean() : null);
    }
    if (networking.network().isPresent()) {
      networking.network().get().keepProxyPortOf(s.containerEnv());
    }
    if (!pausedNow) {
      if (networking.network().isPresent()) {
        // on the network (it started there, or joined before the restart), or still on "none": a
        // policy that allows something and never made it there (the server stopped mid-join) joins now
        networking.connect(s);
      }
    } else if (phase == InstanceState.Phase.FROZEN && networking.network().isPresent()) {
      // frozen: its namespace is still there to write (nsenter does not need it to run); a join waits for it to run
      s.networkAddress(networking.network().get().attachIfJoined(c.id(), s::egressPolicy));
    }
    outside.watch(s);
    String forkImage = labels.get(Registry.LABEL_FORK_IMAGE);
    forkImages.track(id, forkImage);
    sandboxes.put(id, s);
    states.persist(s);
    s.log("info", "taken back by a restarted server (" + (pausedNow ? "paused" : "running") + ")");
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.recovered").addKeyValue("sandbox", id)
        .addKeyValue("state", pausedNow ? "paused" : "running").log("sandbox taken back after a restart");
  }

  /** The limit a sandbox was made with (a quota cannot change later); the server's for one made before limits. */
  private int diskFromLabel(Map<String, String> labels) {
    try {
      return Integer.parseInt(labels.getOrDefault(Registry.LABEL_DISK, Integer.toString(diskSizeMB)));
    } catch (NumberFormatException e) {
      return diskSizeMB;
    }
  }

  private static List<LocalSandbox.VolumeMount> mountsFromLabel(String json) throws IOException {
    List<LocalSandbox.VolumeMount> out = new ArrayList<>();
    for (JsonNode m : Json.parse(json.getBytes(java.nio.charset.StandardCharsets.UTF_8))) {
      out.add(new LocalSandbox.VolumeMount(m.path("volumeId").asText(), m.path("name").asText(), m.path("path").asText()));
    }
    return out;
  }
}
