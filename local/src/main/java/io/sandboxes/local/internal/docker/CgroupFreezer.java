package io.sandboxes.local.internal.docker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Freezes a container's processes through its cgroup's freezer, written from the host: no call to
 * Docker, no runtime binary started (a {@code docker pause} costs the engine a runc or runsc run
 * of its own), so it costs microseconds. Docker does not see it (the container stays "running" to
 * it). Only where this process may write the container's cgroup (root, Docker's default cgroup
 * parents, cgroup v1 or v2): elsewhere it says it could not, and nothing happened.
 */
final class CgroupFreezer {
  private static final Pattern CONTAINER_ID = Pattern.compile("[0-9a-f]{64}");
  private static final Path ROOT = Path.of("/sys/fs/cgroup");

  private CgroupFreezer() {}

  /** A cgroup freezer's control file and what it is written to freeze and to thaw. */
  private record Control(Path file, String frozen, String thawed) {}

  /** Where Docker's cgroup drivers put a container's cgroup, v1's freezer hierarchy and v2's. */
  private static List<Control> candidates(String containerId) {
    return List.of(
        new Control(ROOT.resolve("freezer/docker/" + containerId + "/freezer.state"), "FROZEN", "THAWED"),
        new Control(ROOT.resolve("freezer/system.slice/docker-" + containerId + ".scope/freezer.state"), "FROZEN", "THAWED"),
        new Control(ROOT.resolve("docker/" + containerId + "/cgroup.freeze"), "1", "0"),
        new Control(ROOT.resolve("system.slice/docker-" + containerId + ".scope/cgroup.freeze"), "1", "0"));
  }

  private static Optional<Control> control(String containerId) {
    if (!CONTAINER_ID.matcher(containerId).matches()) {
      return Optional.empty(); // an id of another form names no cgroup this knows
    }
    return candidates(containerId).stream().filter(c -> Files.isRegularFile(c.file())).findFirst();
  }

  /** @return whether the container's processes were frozen; false when its cgroup could not be written */
  static boolean freeze(String containerId) {
    return write(containerId, true);
  }

  /** Thaws what {@link #freeze} froze. @return false when its cgroup could not be written (or is gone) */
  static boolean thaw(String containerId) {
    return write(containerId, false);
  }

  private static boolean write(String containerId, boolean freeze) {
    Optional<Control> c = control(containerId);
    if (c.isEmpty()) {
      return false;
    }
    try {
      Files.writeString(c.get().file(), freeze ? c.get().frozen() : c.get().thawed(), StandardCharsets.US_ASCII);
      return true;
    } catch (IOException | SecurityException e) {
      return false; // not ours to write (no root), or the container went meanwhile
    }
  }
}
