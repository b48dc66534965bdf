package io.sandboxes.local.internal.docker;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.runtime.DiskLimits;
import io.sandboxes.local.internal.runtime.InstanceLabels;
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
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Disk limits on Docker. Where the storage driver can enforce a size ({@code --storage-opt size=}:
 * overlay2 on xfs with {@code pquota}, btrfs, zfs, ...) it does, and a full disk is the sandbox's
 * own ENOSPC. Where it cannot (overlay2 on ext4, as on most hosts), a container's writable layer
 * is measured.
 *
 * <p>A measurement counts allocated blocks when this process can read the layer's folder on the
 * host ({@code du -sxB1}: blocks actually used, hard links once, symlinks never followed, other
 * file systems never entered) and also its count of files and folders. Otherwise (a remote
 * engine, a server without access to Docker's folder) it is Docker's {@code SizeRw}: the
 * apparent size of the layer's files, hard links once; that undercounts many small files (each
 * takes a whole block) and overcounts sparse ones.
 */
public final class DockerDiskLimits implements DiskLimits {
  /** Logs under the disk guard's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger("io.sandboxes.local.internal.DiskGuard");
  /** The longest one measurement may take before it is given up (and reported as not measured). */
  static final Duration MEASURE_TIMEOUT = Duration.ofSeconds(60);

  private final DockerRuntime docker;

  /** @param docker the engine the sandboxes run on */
  public DockerDiskLimits(DockerRuntime docker) {
    this.docker = docker;
  }

  /**
   * Makes two containers that are never started: one with a size option (refused by a driver
   * that cannot hold it), one without, whose layer folder tells whether this process can measure
   * it.
   */
  @Override
  public Mechanism detect(String image, String serverId) {
    Map<String, String> labels = Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId,
        "io.sandboxes.probe", "disk");
    String suffix = io.sandboxes.local.internal.common.Ids.newSandboxId().substring(0, 10);
    try {
      String id = create(image, "sandboxes-diskprobe-q-" + suffix, labels, true);
      docker.remove(id);
      return Mechanism.QUOTA;
    } catch (RuntimeException e) {
      LOG.debug("the storage driver refused a size option: {}", e.getMessage());
    }
    String id = null;
    try {
      id = create(image, "sandboxes-diskprobe-m-" + suffix, labels, false);
      Path upper = upperDir(id);
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

  private String create(String image, String name, Map<String, String> labels, boolean sized) {
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
  @Nullable Path upperDir(String containerId) throws IOException {
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

  @Override
  public @Nullable Usage measure(Mechanism mechanism, String containerId) throws IOException {
    if (mechanism == Mechanism.MEASURED_BLOCKS) {
      Path upper = upperDir(containerId);
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
    byte[] raw = docker.getJson("/containers/" + containerId + "/json?size=true", 4 << 20);
    if (raw == null) {
      return null;
    }
    JsonNode size = Json.parse(raw).path("SizeRw");
    if (!size.isIntegralNumber()) {
      throw new IOException("Docker gave no SizeRw");
    }
    return new Usage(size.asLong(), -1);
  }
}
