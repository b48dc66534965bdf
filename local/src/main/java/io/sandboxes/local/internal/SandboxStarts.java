package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.egress.SandboxNetwork;
import io.sandboxes.local.internal.runtime.InstanceSpec;
import io.sandboxes.local.internal.runtime.DiskLimits;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How sandboxes come to be: a cold start from an image (a template's, or a fork's captured
 * filesystem) with its daemon connected, its service started, its firewall set and its state
 * file written as the create's commit; the warm pool's members started and discarded; and a
 * claimed member bound to the identity of the create that took it.
 */
final class SandboxStarts {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final Map<String, LocalSandbox> sandboxes;
  private final SandboxEngine engine;
  private final Templates templates;
  private final String serverId;
  private final Path stateDir;
  private final StateFiles states;
  private final Optional<SandboxNetwork> network;
  private final SandboxNetworking networking;
  private final OutsideEvents outside;
  private final ForkImages forkImages;
  private final DiskLimits.Mechanism diskLimits;
  private final int diskSizeMB;
  private final ClaimedNames names;

  SandboxStarts(Map<String, LocalSandbox> sandboxes, SandboxEngine engine, Templates templates, String serverId, StateFiles states,
      SandboxNetworking networking, OutsideEvents outside, ForkImages forkImages, DiskLimits.Mechanism diskLimits,
      int diskSizeMB, ClaimedNames names) {
    this.sandboxes = sandboxes;
    this.names = names;
    this.engine = engine;
    this.templates = templates;
    this.serverId = serverId;
    this.stateDir = states.dir();
    this.states = states;
    this.network = networking.network();
    this.networking = networking;
    this.outside = outside;
    this.forkImages = forkImages;
    this.diskLimits = diskLimits;
    this.diskSizeMB = diskSizeMB;
  }

  /**
   * Starts a sandbox from an image: a template's, or (with {@code forkImage} not empty) the
   * captured filesystem of the sandbox it is a fork of.
   */
  LocalSandbox start(String image, String forkImage, String templateId, Duration timeout, Map<String, String> metadata,
      Map<String, String> envVars, LocalSandbox.Lifecycle lifecycle, List<LocalSandbox.VolumeMount> mounts) throws RpcError {
    String id = Registry.newSandboxId();
    String token = Registry.newToken();
    Instant started = Instant.now();
    Instant end = started.plus(timeout);
    Map<String, String> labels = new HashMap<>();
    labels.put(InstanceLabels.OURS, "true");
    labels.put(InstanceLabels.SANDBOX_ID, id);
    labels.put(InstanceLabels.TEMPLATE, templateId);
    labels.put(InstanceLabels.METADATA, Json.string(Json.toObject(metadata)));
    labels.put(InstanceLabels.DEADLINE, end.toString());
    labels.put(InstanceLabels.STARTED, started.toString());
    labels.put(InstanceLabels.ENVD_TOKEN, token);
    labels.put(InstanceLabels.SERVER, serverId);
    // always set, so a container never inherits the label from the image it was made from
    labels.put(Registry.LABEL_FORK_IMAGE, forkImage);
    // a fork image's own mark must not pass to its forks, nor from them to a snapshot of one
    labels.put(Registry.LABEL_FORK_OF, "");
    labels.put(Registry.LABEL_LIFECYCLE, Json.string(Json.object()
        .put("pauseOnTimeout", lifecycle.pauseOnTimeout())
        .put("autoPauseMemory", lifecycle.autoPauseMemory())
        .put("autoResume", lifecycle.autoResume())
        .put("timeoutSeconds", lifecycle.timeoutSeconds())));
    labels.put("io.sandboxes.env", Json.string(Json.toObject(envVars)));
    com.fasterxml.jackson.databind.node.ArrayNode mountJson = Json.array();
    Map<String, String> volumes = new java.util.LinkedHashMap<>();
    for (LocalSandbox.VolumeMount m : mounts) {
      mountJson.addObject().put("volumeId", m.volumeId()).put("name", m.name()).put("path", m.path());
      volumes.put(m.volumeId(), m.path());
    }
    labels.put(Registry.LABEL_VOLUMES, Json.string(mountJson));
    labels.put(Registry.LABEL_DISK, Integer.toString(diskSizeMB));
    List<String> env = new ArrayList<>();
    network.ifPresent(n -> env.addAll(n.proxyEnv()));
    envVars.forEach((k, v) -> env.add(k + "=" + v));
    String containerId = null;
    SandboxDaemon daemon;
    long t0 = System.nanoTime();
    long tStarted;
    long tConnected;
    try {
      daemon = new SandboxDaemon(engine.openDaemon(id));
    } catch (IOException e) {
      throw new RpcError("internal", "the sandbox's daemon socket could not be made: " + e.getMessage());
    }
    labels.putAll(daemon.link().labels());
    try {
      containerId = engine.launch(new InstanceSpec(image, "sandboxes-" + id, labels, env, id, Registry.CPU_COUNT,
          Registry.MEMORY_MB * 1024L * 1024L, Registry.PIDS_LIMIT, volumes, networking.startNetwork(),
          diskLimits == DiskLimits.Mechanism.QUOTA ? diskSizeMB : 0), daemon.link());
      tStarted = System.nanoTime();
      daemon.awaitConnected(SandboxDaemon.CONNECT);
      tConnected = System.nanoTime();
      for (LocalSandbox.VolumeMount m : mounts) {
        engine.prepareVolume(containerId, m.path());
      }
      startService(image, daemon, containerId, id);
    } catch (RuntimeException | IOException | java.util.concurrent.TimeoutException e) {
      if (containerId != null) {
        engine.remove(containerId);
      }
      daemon.delete();
      LOG.warn("creating a sandbox from {} failed: {}", image, e.toString());
      throw new RpcError("internal", "the sandbox container could not be created: " + e.getMessage());
    }
    LocalSandbox sandbox = new LocalSandbox(id, containerId, templateId, token, metadata, envVars, started, end,
        Registry.CPU_COUNT, Registry.MEMORY_MB, diskSizeMB, lifecycle, mounts, engine, daemon);
    sandbox.reportTemplateAs(templates.reportedId(templateId));
    sandbox.proxyVars(networking.proxyVars());
    if (network.isPresent() && network.get().startsOnBridge()) {
      // open mode only: every other sandbox starts deny-all on "none" and joins the network when
      // a policy that allows something is set (setNetwork)
      try {
        sandbox.networkAddress(network.get().attach(containerId, sandbox::egressPolicy));
        networking.installTrust(sandbox);
      } catch (IOException | RuntimeException e) {
        engine.remove(containerId);
        daemon.delete();
        LOG.warn("sandbox {} could not be put behind its egress firewall: {}", id, e.toString());
        throw new RpcError("internal", "the sandbox's egress firewall could not be set up: " + e.getMessage());
      }
    }
    // the state file is the create's commit: a container without one was never answered (the
    // server stopped midway), and a restarted server removes it rather than bring it back
    try {
      states.record(sandbox);
    } catch (IOException e) {
      engine.remove(containerId);
      daemon.delete();
      network.ifPresent(n -> n.detach(sandbox.networkAddress(), sandbox.instanceId()));
      throw new RpcError("internal", "the sandbox's state could not be recorded in " + stateDir + ": " + e.getMessage());
    }
    daemon.readEnvironmentSoon(engine, containerId);
    outside.watch(sandbox);
    forkImages.track(id, forkImage);
    sandboxes.put(id, sandbox);
    sandbox.log("info", "sandbox created from template " + templateId + ", ends at " + end);
    long tDone = System.nanoTime();
    // where a cold create's time goes: Docker's create and start, the daemon's first connection, the rest
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.created").addKeyValue("sandbox", id).addKeyValue("template", templateId)
        .addKeyValue("container", containerId.substring(0, 12)).addKeyValue("endAt", end)
        .addKeyValue("dockerMs", (tStarted - t0) / 1_000_000).addKeyValue("daemonMs", (tConnected - tStarted) / 1_000_000)
        .addKeyValue("totalMs", (tDone - t0) / 1_000_000).log("sandbox created");
    return sandbox;
  }

  /** Runs the image's start command (the code interpreter's bridge), if it names one, and waits for its port. */
  private void startService(String image, SandboxDaemon daemon, String containerId, String id)
      throws IOException, java.util.concurrent.TimeoutException {
    Optional<StartCommand> service = StartCommand.of(engine, image);
    if (service.isEmpty()) {
      return;
    }
    io.sandboxes.local.internal.daemon.DaemonConnection conn = daemon.current();
    if (conn == null) {
      throw new IOException("the sandbox's daemon disconnected before its start command could run");
    }
    service.get().run(conn, daemon.containerEnv(engine, containerId), id);
  }

  /**
   * Makes a claimed member a sandbox: its identity bound (held in memory and in the state file,
   * never in the container's config), the create's policy enforced through the gateway and, when
   * it allows more than the member's deny-all, its firewall, and the state file written as the
   * create's commit.
   *
   * @return the sandbox, or null when the member was unusable (it is then discarded)
   */
  @Nullable LocalSandbox claim(WarmPool.Member m, String image, String templateId, Duration timeout,
      Map<String, String> metadata, Map<String, String> envVars, LocalSandbox.Lifecycle lifecycle) {
    if (!m.image().equals(image) || m.daemon().current() == null) {
      LOG.info("warm pool member {} is stale or lost its daemon; discarding it", m.id());
      discardMember(m);
      return null;
    }
    Instant started = Instant.now();
    LocalSandbox sandbox = new LocalSandbox(m.id(), m.instanceId(), templateId, Registry.newToken(), metadata, envVars, started,
        started.plus(timeout), Registry.CPU_COUNT, Registry.MEMORY_MB, diskSizeMB, lifecycle, List.of(), engine, m.daemon());
    sandbox.reportTemplateAs(templates.reportedId(templateId));
    sandbox.proxyVars(networking.proxyVars());
    sandbox.markPooled();
    try {
      if (network.isPresent() && m.networkAddress() != null) {
        // open mode; every other member waits on "none" and joins when its policy allows something
        network.get().rebind(m.networkAddress(), m.instanceId(), sandbox::egressPolicy);
        sandbox.networkAddress(m.networkAddress());
      }
      states.record(sandbox);
    } catch (IOException | RuntimeException e) {
      LOG.warn("claiming warm pool member {} failed; the create goes cold: {}", m.id(), e.toString());
      discardMember(m);
      states.forget(m.id());
      return null;
    }
    outside.watch(sandbox);
    sandboxes.put(m.id(), sandbox);
    // the name tells `status` and `docker ps` it is claimed; nothing else depends on it
    names.claimed(m.instanceId(), m.id(), () -> sandboxes.get(m.id()) == sandbox);
    sandbox.log("info", "sandbox created from template " + templateId + " (warm pool), ends at " + sandbox.endAt());
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.created").addKeyValue("sandbox", m.id()).addKeyValue("template", templateId)
        .addKeyValue("container", m.instanceId().substring(0, 12)).addKeyValue("endAt", sandbox.endAt())
        .addKeyValue("warm", true).log("sandbox created");
    return sandbox;
  }

  /**
   * Starts a pool member: no sandbox id, token, metadata, env or deadline in its config (the id it
   * will take is its hostname and name only), its daemon connected, its firewall deny-all before
   * it can be handed out.
   */
  WarmPool.Member startMember(String templateId) throws Exception {
    String image = templates.resolve(templateId);
    if (image == null) {
      throw new IOException("template '" + templateId + "' not found");
    }
    String id = Registry.newSandboxId();
    Map<String, String> labels = new HashMap<>();
    labels.put(InstanceLabels.OURS, "true");
    labels.put(InstanceLabels.SERVER, serverId);
    labels.put(InstanceLabels.TEMPLATE, templateId);
    labels.put(WarmPool.LABEL_POOL, "true");
    // as a cold sandbox's: never inherited from the image, and the disk limit it is held to
    labels.put(Registry.LABEL_FORK_IMAGE, "");
    labels.put(Registry.LABEL_FORK_OF, "");
    labels.put(Registry.LABEL_DISK, Integer.toString(diskSizeMB));
    List<String> env = new ArrayList<>();
    network.ifPresent(n -> env.addAll(n.proxyEnv()));
    SandboxDaemon daemon = new SandboxDaemon(engine.openDaemon(id));
    labels.putAll(daemon.link().labels());
    String containerId = null;
    String ip = null;
    try {
      containerId = engine.launch(new InstanceSpec(image, WarmPool.NAME_PREFIX + id, labels, env, id, Registry.CPU_COUNT,
          Registry.MEMORY_MB * 1024L * 1024L, Registry.PIDS_LIMIT, Map.of(), networking.startNetwork(),
          diskLimits == DiskLimits.Mechanism.QUOTA ? diskSizeMB : 0), daemon.link());
      daemon.awaitConnected(SandboxDaemon.CONNECT);
      // a member's service is up before it is handed out: a claimed code interpreter has a warm kernel
      startService(image, daemon, containerId, id);
      // its environment too, which every command starts from: read at a claimed member's first
      // command, the engine's inspect made it about 10 ms slower than the next
      daemon.containerEnv(engine, containerId);
      if (network.isPresent() && network.get().startsOnBridge()) {
        ip = network.get().attach(containerId, () -> io.sandboxes.local.internal.egress.EgressPolicy.DENY_ALL);
      }
      return new WarmPool.Member(id, containerId, templateId, image, daemon, ip);
    } catch (Exception e) {
      if (containerId != null) {
        engine.remove(containerId);
      }
      daemon.delete();
      String gone = ip;
      String goneContainer = containerId;
      network.ifPresent(n -> n.detach(gone, goneContainer));
      throw e;
    }
  }

  void discardMember(WarmPool.Member m) {
    try {
      engine.remove(m.instanceId());
    } catch (RuntimeException e) {
      LOG.warn("removing warm pool member {} failed: {}", m.id(), e.toString());
    }
    m.daemon().delete();
    network.ifPresent(n -> n.detach(m.networkAddress(), m.instanceId()));
  }
}
