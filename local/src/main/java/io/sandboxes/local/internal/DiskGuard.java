package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.StructuredLog;
import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's disk limit: the most its writable layer (the container's own filesystem, not its
 * volumes) may hold. Where the storage driver can enforce a size ({@code --storage-opt size=}:
 * overlay2 on xfs with {@code pquota}, btrfs, zfs, ...) it does, and a full disk is the sandbox's
 * own ENOSPC. Where it cannot (overlay2 on ext4, as on most hosts), each running sandbox's
 * writable layer is measured every few seconds and a sandbox past its limit is stopped (removed)
 * with that reason.
 *
 * <p>A measurement counts allocated blocks when this process can read the layer's folder on the
 * host ({@code du -sxB1}: blocks actually used, hard links once, symlinks never followed, other
 * file systems never entered) and also its count of files and folders, held to one per 16 KiB of
 * the limit (ext4's own ratio), so millions of empty files cannot fill the host's inode table.
 * Otherwise (a remote engine, a server without access to Docker's folder) it is Docker's
 * {@code SizeRw}: the apparent size of the layer's files, hard links once; that undercounts
 * many small files (each takes a whole block) and overcounts sparse ones.
 */
public final class DiskGuard implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskGuard.class);
  /** How often each running sandbox's writable layer is measured (less often when a round takes longer). */
  static final Duration PERIOD = Duration.ofSeconds(3);
  /** The longest one measurement may take before it is given up (and reported as not measured). */
  static final Duration MEASURE_TIMEOUT = Duration.ofSeconds(60);
  /** Files and folders allowed per MB of limit: one per 16 KiB, as ext4 makes them. */
  static final long INODES_PER_MB = 64;

  /** How the limit is held. */
  public enum Mechanism {
    /** The storage driver enforces the size ({@code --storage-opt size=}). */
    QUOTA("enforced by the storage driver (--storage-opt size)"),
    /** Measured: allocated blocks and entries of the layer's folder on this host. */
    MEASURED_BLOCKS("measured every " + PERIOD.toSeconds() + " s (allocated blocks of the writable layer); a sandbox past it is stopped"),
    /** Measured: Docker's {@code SizeRw}. */
    MEASURED_SIZE_RW("measured every " + PERIOD.toSeconds() + " s (Docker's SizeRw of the writable layer); a sandbox past it is stopped");

    private final String description;

    Mechanism(String description) {
      this.description = description;
    }

    /** @return how it works, for the log */
    public String description() {
      return description;
    }
  }

  /** What a measurement found. */
  record Usage(long bytes, long entries) {}

  /** What is done with a sandbox past its limit. */
  interface Stopper {
    void stop(LocalSandbox sandbox, String reason);
  }

  private final DockerRuntime docker;
  private final Mechanism mechanism;
  private final Supplier<List<LocalSandbox>> running;
  private final Stopper stopper;
  private final @Nullable Thread thread;

  private DiskGuard(DockerRuntime docker, Mechanism mechanism, Supplier<List<LocalSandbox>> running, Stopper stopper) {
    this.docker = docker;
    this.mechanism = mechanism;
    this.running = running;
    this.stopper = stopper;
    this.thread = mechanism == Mechanism.QUOTA ? null : Thread.ofVirtual().name("sandboxes-disk-guard").start(this::loop);
  }

  /**
   * Finds how the limit can be held on this engine and starts measuring where it must be.
   *
   * @param image an image to make the (never started) probe containers from
   * @param running the sandboxes to measure, each round
   * @param stopper what is done with one past its limit
   */
  static DiskGuard start(DockerRuntime docker, String image, String serverId, Supplier<List<LocalSandbox>> running,
      Stopper stopper) {
    Mechanism m = detect(docker, image, serverId);
    StructuredLog.atInfo(LOG).addKeyValue("event", "disk.limit").addKeyValue("mechanism", m.name())
        .log("sandbox disk limits are " + m.description());
    return new DiskGuard(docker, m, running, stopper);
  }

  /** @return how the limit is held */
  public Mechanism mechanism() {
    return mechanism;
  }

  /**
   * Makes two containers that are never started: one with a size option (refused by a driver
   * that cannot hold it), one without, whose layer folder tells whether this process can measure
   * it.
   */
  static Mechanism detect(DockerRuntime docker, String image, String serverId) {
    Map<String, String> labels = Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId,
        "io.sandboxes.probe", "disk");
    String suffix = Registry.newSandboxId().substring(0, 10);
    try {
      String id = create(docker, image, "sandboxes-diskprobe-q-" + suffix, labels, true);
      docker.remove(id);
      return Mechanism.QUOTA;
    } catch (RuntimeException e) {
      LOG.debug("the storage driver refused a size option: {}", e.getMessage());
    }
    String id = null;
    try {
      id = create(docker, image, "sandboxes-diskprobe-m-" + suffix, labels, false);
      Path upper = upperDir(docker, id);
      if (upper != null && du(upper, false) != null && du(upper, true) != null) { // a du without --inodes cannot count entries
        return Mechanism.MEASURED_BLOCKS;
      }
    } catch (RuntimeException | IOException e) {
      LOG.debug("a probe container's writable layer could not be measured on this host: {}", e.toString());
    } finally {
      if (id != null) {
        docker.remove(id);
      }
    }
    return Mechanism.MEASURED_SIZE_RW;
  }

  private static String create(DockerRuntime docker, String image, String name, Map<String, String> labels, boolean sized) {
    com.github.dockerjava.api.model.HostConfig host = com.github.dockerjava.api.model.HostConfig.newHostConfig()
        .withNetworkMode("none");
    if (sized) {
      host.withStorageOpt(Map.of("size", "64M"));
    }
    try (var cmd = docker.client().createContainerCmd(image)) {
      return cmd.withName(name).withLabels(labels).withCmd(List.of("true")).withHostConfig(host).exec().getId();
    }
  }

  /** The container's overlay upper folder on this host, if Docker names one and this process can read it. */
  static @Nullable Path upperDir(DockerRuntime docker, String containerId) throws IOException {
    byte[] raw = docker.getJson("/containers/" + containerId + "/json", 4 << 20);
    if (raw == null) {
      return null;
    }
    JsonNode n = Json.parse(raw).path("GraphDriver");
    String upper = n.path("Data").path("UpperDir").asText("");
    if (!"overlay2".equals(n.path("Name").asText()) || !upper.startsWith("/")) {
      return null;
    }
    Path p = Path.of(upper);
    return Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && Files.isReadable(p) ? p : null;
  }

  /**
   * {@code du} of a folder this server found through Docker (never through the sandbox): the
   * path is Docker's, the sandbox only chooses what is inside it, which du reads without
   * following links or leaving the file system.
   *
   * @return the total, or null when du could not say
   */
  static @Nullable Long du(Path folder, boolean inodes) throws IOException {
    List<String> args = inodes ? List.of("-s", "-x", "--inodes", "--", folder.toString())
        : List.of("-s", "-x", "-B1", "--", folder.toString());
    Process p = io.sandboxes.local.internal.host.HostTools.command("du", args).redirectErrorStream(false).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try (InputStream out = p.getInputStream()) {
      // its one line (the total and the folder's name, which is Docker's) fits the pipe: read once du is done
      if (!p.waitFor(MEASURE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IOException("du took longer than " + MEASURE_TIMEOUT.toSeconds() + " s");
      }
      byte[] answer = out.readNBytes(4096);
      String line = new String(answer, StandardCharsets.UTF_8);
      int tab = line.indexOf('\t');
      if (tab <= 0) {
        return null;
      }
      try {
        return Long.parseLong(line.substring(0, tab).strip());
      } catch (NumberFormatException e) {
        return null;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while measuring " + folder);
    } finally {
      p.destroyForcibly();
    }
  }

  /**
   * Measures a sandbox's writable layer.
   *
   * @return what it holds, or null when its container is gone
   * @throws IOException when it could not be measured
   */
  @Nullable Usage measure(LocalSandbox s) throws IOException {
    if (mechanism == Mechanism.MEASURED_BLOCKS) {
      Path upper = upperDir(docker, s.containerId());
      if (upper == null) {
        throw new IOException("its writable layer's folder is not readable here");
      }
      Long bytes = du(upper, false);
      Long entries = du(upper, true);
      if (bytes == null || entries == null) {
        throw new IOException("du gave no total for " + upper);
      }
      return new Usage(bytes, entries);
    }
    byte[] raw = docker.getJson("/containers/" + s.containerId() + "/json?size=true", 4 << 20);
    if (raw == null) {
      return null;
    }
    JsonNode size = Json.parse(raw).path("SizeRw");
    if (!size.isIntegralNumber()) {
      throw new IOException("Docker gave no SizeRw");
    }
    return new Usage(size.asLong(), -1);
  }

  /** @return why a sandbox with this usage must stop, or null when it is within its limit */
  static @Nullable String overLimit(Usage u, long limitMB) {
    long limit = limitMB * 1024 * 1024;
    if (u.bytes() > limit) {
      return "stopped: its writable layer passed its disk limit of " + limitMB + " MB (measured " + (u.bytes() >> 20) + " MB)";
    }
    if (u.entries() > limitMB * INODES_PER_MB) {
      return "stopped: its writable layer passed its limit of " + limitMB * INODES_PER_MB + " files and folders (one per 16 KiB"
          + " of its disk limit of " + limitMB + " MB; measured " + u.entries() + ")";
    }
    return null;
  }

  private void loop() {
    Duration pause = PERIOD;
    while (!Thread.currentThread().isInterrupted()) {
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        return;
      }
      long began = System.nanoTime();
      round();
      // a round over many or crowded sandboxes takes long: the pause after it is at least as long,
      // so measuring keeps to half of one core at most
      Duration took = Duration.ofNanos(System.nanoTime() - began);
      pause = took.compareTo(PERIOD) > 0 ? took : PERIOD;
    }
  }

  /** Measures every running sandbox once, stopping each past its limit. */
  private void round() {
    for (LocalSandbox s : running.get()) {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      if (s.paused() || s.diskSizeMB() <= 0) {
        continue; // a frozen or stopped container writes nothing
      }
      try {
        Usage u = measure(s);
        String reason = u == null ? null : overLimit(u, s.diskSizeMB());
        if (reason != null) {
          StructuredLog.atWarn(LOG).addKeyValue("event", "sandbox.disk-limit").addKeyValue("sandbox", s.id())
              .addKeyValue("bytes", u.bytes()).addKeyValue("entries", u.entries()).addKeyValue("limitMB", s.diskSizeMB())
              .log("sandbox {} {}", s.id(), reason);
          stopper.stop(s, reason);
        }
      } catch (java.io.InterruptedIOException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        // not measured is not within the limit: said every round until it can be measured again
        LOG.warn("the writable layer of sandbox {} could not be measured: {}", s.id(), e.toString());
      }
    }
  }

  @Override
  public void close() {
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(Duration.ofSeconds(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
