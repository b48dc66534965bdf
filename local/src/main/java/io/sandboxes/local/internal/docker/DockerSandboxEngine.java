package io.sandboxes.local.internal.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.daemon.DaemonBinary;
import io.sandboxes.local.internal.runtime.CapturedImage;
import io.sandboxes.local.internal.runtime.DaemonLink;
import io.sandboxes.local.internal.runtime.DiskLimits;
import io.sandboxes.local.internal.runtime.Instance;
import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.InstanceEvents;
import io.sandboxes.local.internal.runtime.InstanceSpec;
import io.sandboxes.local.internal.runtime.InstanceState;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox engine on Docker: a sandbox's instance is a container, its daemon link a unix
 * socket in a folder of the server's state folder bind-mounted into it (with the daemon binary),
 * a volume a Docker volume, a captured image a committed one.
 */
public final class DockerSandboxEngine implements SandboxEngine {
  private static final Logger LOG = LoggerFactory.getLogger(DockerSandboxEngine.class);
  /** The prefix of a volume's Docker name; the rest is its id. */
  static final String VOLUME_PREFIX = "sandboxes-vol-";

  private final DockerRuntime docker;
  private final Path stateDir;
  /** {@link #memoryBytes}, read once when the engine is made. */
  private final java.util.concurrent.CompletableFuture<java.util.OptionalLong> memory = new java.util.concurrent.CompletableFuture<>();
  private final Path daemonBinary;
  /** CPU and memory use: the instances' cgroup files, not Docker's stats. */
  private final CgroupReader cgroups = new CgroupReader();
  private final DockerDiskLimits diskLimits;

  /**
   * Puts the daemon binary in the state folder, where containers mount it from.
   *
   * @param docker the engine the sandboxes run on
   * @param stateDir the server's state folder: daemon sockets and the binary live under it
   * @throws UncheckedIOException when the binary could not be put there
   */
  public DockerSandboxEngine(DockerRuntime docker, Path stateDir) {
    this.docker = docker;
    this.stateDir = stateDir;
    // read beside the server's other start-up work (the engine's info takes 10-40 ms to answer)
    Thread.ofVirtual().name("sandboxes-engine-info").start(() -> memory.complete(readMemory()));
    this.diskLimits = new DockerDiskLimits(docker);
    try {
      this.daemonBinary = DaemonBinary.install(stateDir.resolve("envd-bin"));
    } catch (IOException e) {
      throw new UncheckedIOException("the sandbox daemon could not be put in " + stateDir, e);
    }
  }

  @Override
  public DaemonLink openDaemon(String sandboxId) throws IOException {
    return SocketDaemonLink.open(SocketDaemonLink.folderFor(stateDir, sandboxId));
  }

  @Override
  public @Nullable DaemonLink reopenDaemon(Map<String, String> labels) throws IOException {
    String folder = labels.get(SocketDaemonLink.LABEL_FOLDER);
    return folder == null || folder.isEmpty() ? null : SocketDaemonLink.open(Path.of(folder));
  }

  @Override
  public void discardDaemon(Map<String, String> labels) {
    String folder = labels.get(SocketDaemonLink.LABEL_FOLDER);
    if (folder != null && !folder.isEmpty()) {
      SocketDaemonLink.deleteTree(Path.of(folder));
    }
  }

  @Override
  public void discardDaemon(String sandboxId) {
    SocketDaemonLink.deleteTree(SocketDaemonLink.folderFor(stateDir, sandboxId));
  }

  @Override
  public void discardDaemons() {
    SocketDaemonLink.deleteTree(stateDir.resolve("envd"));
    SocketDaemonLink.deleteTree(stateDir.resolve("envd-bin"));
  }

  @Override
  public String launch(InstanceSpec spec, DaemonLink daemon) {
    if (!(daemon instanceof SocketDaemonLink link)) {
      throw new IllegalArgumentException("not a daemon link of this engine: " + daemon);
    }
    Map<String, String> volumes = new LinkedHashMap<>();
    spec.volumes().forEach((id, path) -> volumes.put(VOLUME_PREFIX + id, path));
    return docker.createAndStart(DaemonInjection.withDaemon(new DockerRuntime.ContainerSpec(spec.image(), spec.name(), spec.labels(),
        spec.env(), spec.hostname(), spec.cpuCount(), spec.memoryBytes(), spec.pidsLimit(), volumes, spec.network())
        .withDiskQuotaMB(spec.diskQuotaMB()), link.folder(), daemonBinary));
  }

  @Override
  public InstanceEvents.Subscription follow(String serverId, InstanceEvents receiver) {
    return new DockerInstanceEvents(docker, serverId, receiver);
  }

  @Override
  public void prepareVolume(String instanceId, String path) throws IOException {
    // a fresh Docker volume's root belongs to root; the sandbox's user must be able to write it. find, where
    // coreutils fail: under gVisor (runsc 2022-12-19) their statx with AT_NO_AUTOMOUNT is refused
    docker.runAsRoot(instanceId, "/bin/sh", "-c", "[ \"$(stat -c %u \"$1\" 2>/dev/null || find \"$1\" -maxdepth 0 -printf %U)\" = 0 ]"
        + " && [ -z \"$(ls -A \"$1\" 2>/dev/null || find \"$1\" -mindepth 1 -maxdepth 1)\" ] && chown 1000:1000 \"$1\"; true",
        "sh", path);
  }

  @Override
  public void freeze(String instanceId) {
    docker.pause(instanceId);
  }

  @Override
  public void thaw(String instanceId) {
    docker.unpause(instanceId);
  }

  @Override
  public boolean freezeCheaply(String instanceId) {
    return CgroupFreezer.freeze(instanceId);
  }

  @Override
  public void thawCheaply(String instanceId) {
    CgroupFreezer.thaw(instanceId);
  }

  @Override
  public void stop(String instanceId, Duration grace) {
    docker.client().stopContainerCmd(instanceId).withTimeout((int) grace.toSeconds()).exec();
  }

  @Override
  public void restart(String instanceId) {
    DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(instanceId).exec());
  }

  @Override
  public boolean remove(String instanceId) {
    return docker.remove(instanceId);
  }

  @Override
  public List<Instance> instances(Map<String, String> labels) {
    return docker.client().listContainersCmd().withShowAll(true).withLabelFilter(labels).exec().stream()
        // Docker lists a container's names with a leading slash; the seam's names are bare
        .map(c -> new Instance(c.getId(), c.getNames() == null ? List.of()
            : java.util.Arrays.stream(c.getNames()).map(n -> n.startsWith("/") ? n.substring(1) : n).toList(),
            c.getLabels() == null ? Map.of() : c.getLabels()))
        .toList();
  }

  @Override
  public InstanceState state(String instanceId) {
    InspectContainerResponse.ContainerState s;
    try {
      s = docker.client().inspectContainerCmd(instanceId).exec().getState();
    } catch (NotFoundException e) {
      return InstanceState.GONE;
    }
    String status = String.valueOf(s.getStatus());
    InstanceState.Phase phase = switch (status) {
      case "running" -> InstanceState.Phase.RUNNING;
      case "paused" -> InstanceState.Phase.FROZEN;
      case "exited", "created" -> InstanceState.Phase.STOPPED;
      default -> InstanceState.Phase.OTHER;
    };
    return new InstanceState(false, Boolean.TRUE.equals(s.getRunning()), Boolean.TRUE.equals(s.getPaused()),
        "removing".equals(status), Boolean.TRUE.equals(s.getOOMKilled()), s.getExitCodeLong(), status, phase);
  }

  @Override
  public List<String> environment(String instanceId) {
    String[] raw = docker.client().inspectContainerCmd(instanceId).exec().getConfig().getEnv();
    return raw == null ? List.of() : List.of(raw);
  }

  @Override
  public String imageOf(String instanceId) {
    return docker.client().inspectContainerCmd(instanceId).exec().getImageId();
  }

  @Override
  public Map<String, String> imageLabels(String imageId) {
    var config = docker.client().inspectImageCmd(imageId).exec().getConfig();
    return config == null || config.getLabels() == null ? Map.of() : config.getLabels();
  }

  @Override
  public void rename(String instanceId, String name) {
    docker.client().renameContainerCmd(instanceId).withName(name).exec();
  }

  @Override
  public String capture(String instanceId, String repository, String tag, Map<String, String> labels, boolean freeze) {
    return docker.client().commitCmd(instanceId).withRepository(repository).withTag(tag).withLabels(labels).withPause(freeze).exec();
  }

  @Override
  public String ensureCodeInterpreter(String baseImage, java.util.function.Consumer<String> progress) {
    return CodeInterpreterImage.ensure(docker, baseImage, progress);
  }

  @Override
  public boolean discardImage(String imageId) {
    return docker.removeImage(imageId, true, true);
  }

  @Override
  public ImageRemoval removeImage(String imageId) {
    try {
      return docker.removeImage(imageId, false, true) ? ImageRemoval.REMOVED : ImageRemoval.GONE;
    } catch (InUse e) {
      return ImageRemoval.IN_USE;
    }
  }

  @Override
  public List<CapturedImage> images(Map<String, String> labels) {
    return docker.client().listImagesCmd().withLabelFilter(labels).exec().stream()
        .map(i -> new CapturedImage(i.getId(), i.getLabels() == null ? Map.of() : i.getLabels()))
        .toList();
  }

  @Override
  public List<StoredVolume> volumes(List<String> selectors) {
    List<InspectVolumeResponse> all = docker.client().listVolumesCmd().withFilter("label", selectors).exec().getVolumes();
    return all == null ? List.of()
        : all.stream().map(v -> new StoredVolume(v.getName(), v.getLabels() == null ? Map.of() : v.getLabels())).toList();
  }

  @Override
  public StoredVolume createVolume(String volumeId, Map<String, String> labels) {
    String name = VOLUME_PREFIX + volumeId;
    docker.client().createVolumeCmd().withName(name).withLabels(labels).exec();
    return new StoredVolume(name, labels);
  }

  @Override
  public boolean removeVolume(String name) {
    try {
      docker.client().removeVolumeCmd(name).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (ConflictException e) {
      throw new InUse(e.getMessage(), e);
    }
  }

  @Override
  public DiskLimits diskLimits() {
    return diskLimits;
  }

  /** The engine's {@code MemTotal} ({@code GET /info}): the machine, or the virtual machine, its containers run on. */
  @Override
  public java.util.OptionalLong memoryBytes() {
    return memory.join();
  }

  private java.util.OptionalLong readMemory() {
    try {
      byte[] info = docker.getJson("/info", 4 << 20);
      long total = info == null ? 0 : Json.parse(info).path("MemTotal").asLong(0);
      return total > 0 ? java.util.OptionalLong.of(total) : java.util.OptionalLong.empty();
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not read the engine's memory from its info: {}", e.toString());
      return java.util.OptionalLong.empty();
    }
  }

  @Override
  public Usage usage(String instanceId, int cores) throws IOException {
    CgroupReader.Usage u = cgroups.read(instanceId, cores);
    return new Usage(u.cpuUsedPct(), u.memUsed(), u.memCache(), u.memLimit());
  }

  @Override
  public void retainUsage(java.util.Set<String> instanceIds) {
    cgroups.retain(instanceIds);
  }
}
