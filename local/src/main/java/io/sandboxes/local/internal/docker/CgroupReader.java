package io.sandboxes.local.internal.docker;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A container's CPU and memory use, read from its cgroup files on the host, with no call to the
 * Docker engine (Docker 20.10's stats endpoint deadlocked here under many concurrent readers).
 *
 * <p>Where: the host's cgroup mounts come from {@code /proc/self/mountinfo} (cgroup v1's
 * {@code cpuacct} and {@code memory} hierarchies when both are mounted, as Docker uses them on a
 * hybrid host; else the cgroup v2 mount). The container's folder under each is Docker's own name
 * for it, built from the 64-hex container id Docker gave: {@code docker/<id>} (the cgroupfs
 * driver) or {@code system.slice/docker-<id>.scope} (the systemd driver). A daemon started with
 * its own {@code --cgroup-parent} puts containers elsewhere; their samples are then absent, never
 * made up. Nothing the sandbox says is used, no symlink is followed on the way (every folder is
 * checked, every file opened with {@code O_NOFOLLOW}), and no file is read past 64 KiB.
 *
 * <p>CPU is a rate: the usage counter's growth between two readings over the wall time between
 * them, as a percentage of the cores the container may use. The reader keeps each container's
 * last reading; with none (or a stale one) it takes two, a quarter second apart.
 */
public final class CgroupReader {
  /** No cgroup file this reads is longer; a longer one is not read. */
  static final int MAX_FILE = 64 * 1024;
  /** A previous reading older than this is not used for a rate (the sandbox may have been paused since). */
  static final long STALE_NANOS = 15_000_000_000L;
  /** The gap between two readings when there is no usable previous one. */
  static final long FIRST_GAP_MILLIS = 250;
  private static final Pattern CONTAINER_ID = Pattern.compile("[0-9a-f]{64}");

  /** The cgroup version in use and the folders under which containers' cgroups are found. */
  record Layout(int version, @Nullable Path cpu, @Nullable Path memory) {}

  /** One reading: the CPU counter in nanoseconds, memory figures in bytes (limit -1: none), and when. */
  record Reading(long cpuNanos, long memUsage, long memCache, long memLimit, long atNanos) {}

  /** What a sample needs: CPU in percent of the allowed cores, memory in bytes. */
  public record Usage(double cpuUsedPct, long memUsed, long memCache, long memLimit) {}

  private final @Nullable Layout layout;
  private final @Nullable String why;
  private final Map<String, Reading> last = new ConcurrentHashMap<>();

  /** A reader of this host's cgroups, found from this process's mount table. */
  public CgroupReader() {
    this(Path.of("/proc/self/mountinfo"));
  }

  CgroupReader(Path mountinfo) {
    Layout found = null;
    String problem = null;
    try {
      found = layout(Files.readAllLines(mountinfo, StandardCharsets.UTF_8));
      if (found == null) {
        problem = "no cgroup v1 cpuacct and memory mounts, and no cgroup v2 mount, in " + mountinfo;
      }
    } catch (IOException | RuntimeException e) {
      problem = "the mount table " + mountinfo + " could not be read: " + e.getMessage();
    }
    this.layout = found;
    this.why = problem;
  }

  /** A reader with a known layout (tests). */
  CgroupReader(Layout layout) {
    this.layout = layout;
    this.why = null;
  }

  /**
   * Picks the hierarchies from {@code /proc/self/mountinfo} lines: v1's {@code cpuacct} and
   * {@code memory} when both are mounted at their root, else the v2 mount at its root.
   */
  static @Nullable Layout layout(List<String> mountinfo) {
    Path cpu = null;
    Path memory = null;
    Path unified = null;
    for (String line : mountinfo) {
      int dash = line.indexOf(" - ");
      if (dash < 0) {
        continue;
      }
      String[] left = line.substring(0, dash).split(" ");
      String[] right = line.substring(dash + 3).split(" ");
      if (left.length < 5 || right.length < 3 || !left[3].equals("/")) {
        continue; // a mount of a sub-folder (a cgroup namespace) does not hold Docker's paths
      }
      Path at = Path.of(unescape(left[4]));
      if (right[0].equals("cgroup")) {
        Set<String> options = Set.of(right[2].split(","));
        if (options.contains("cpuacct") && cpu == null) {
          cpu = at;
        }
        if (options.contains("memory") && memory == null) {
          memory = at;
        }
      } else if (right[0].equals("cgroup2") && unified == null) {
        unified = at;
      }
    }
    if (cpu != null && memory != null) {
      return new Layout(1, cpu, memory);
    }
    if (unified != null) {
      return new Layout(2, unified, unified);
    }
    return null;
  }

  /** mountinfo escapes space, tab, newline and backslash as three octal digits. */
  private static String unescape(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length()) {
        String oct = s.substring(i + 1, i + 4);
        if (oct.chars().allMatch(d -> d >= '0' && d <= '7')) {
          out.append((char) Integer.parseInt(oct, 8));
          i += 3;
          continue;
        }
      }
      out.append(c);
    }
    return out.toString();
  }

  /**
   * Reads a container's use now.
   *
   * @param containerId the full id Docker gave the container
   * @param cores how many cores it may use (its CPU limit, at most the host's)
   * @throws IOException when the container's cgroup cannot be found or read: the sample is then
   *     absent, never zero
   */
  public Usage read(String containerId, int cores) throws IOException {
    if (cores < 1) {
      throw new IllegalArgumentException("cores must be positive, got " + cores);
    }
    Reading before = last.get(containerId);
    Reading now = reading(containerId);
    if (before == null || now.atNanos() - before.atNanos() > STALE_NANOS || now.cpuNanos() < before.cpuNanos()) {
      try {
        Thread.sleep(FIRST_GAP_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while reading the CPU use of container " + containerId, e);
      }
      before = now;
      now = reading(containerId);
    }
    last.put(containerId, now);
    long wall = now.atNanos() - before.atNanos();
    double pct = wall <= 0 ? 0 : (double) (now.cpuNanos() - before.cpuNanos()) / ((double) wall * cores) * 100.0;
    pct = Math.max(0, Math.min(100, pct));
    return new Usage(pct, Math.max(0, now.memUsage() - now.memCache()), now.memCache(), now.memLimit());
  }

  /** Forgets the readings of containers not in {@code containerIds}. */
  public void retain(Set<String> containerIds) {
    last.keySet().retainAll(containerIds);
  }

  Reading reading(String containerId) throws IOException {
    if (layout == null) {
      throw new IOException("cgroups cannot be read on this host: " + why);
    }
    if (!CONTAINER_ID.matcher(containerId).matches()) {
      throw new IOException("'" + containerId + "' is not a full container id");
    }
    Path cpuDir = containerDir(layout.cpu(), containerId);
    Path memDir = layout.version() == 2 ? cpuDir : containerDir(layout.memory(), containerId);
    long at = System.nanoTime();
    if (layout.version() == 1) {
      long cpu = number(read(cpuDir, "cpuacct.usage").strip(), cpuDir.resolve("cpuacct.usage"));
      long usage = number(read(memDir, "memory.usage_in_bytes").strip(), memDir.resolve("memory.usage_in_bytes"));
      Map<String, Long> stat = stat(read(memDir, "memory.stat"));
      Long cache = stat.containsKey("total_cache") ? stat.get("total_cache") : stat.get("cache");
      if (cache == null) {
        throw new IOException(memDir.resolve("memory.stat") + " has no cache figure");
      }
      long limit = number(read(memDir, "memory.limit_in_bytes").strip(), memDir.resolve("memory.limit_in_bytes"));
      return new Reading(cpu, usage, cache, limit, at);
    }
    Long usec = stat(read(cpuDir, "cpu.stat")).get("usage_usec");
    if (usec == null) {
      throw new IOException(cpuDir.resolve("cpu.stat") + " has no usage_usec");
    }
    long usage = number(read(memDir, "memory.current").strip(), memDir.resolve("memory.current"));
    Long file = stat(read(memDir, "memory.stat")).get("file");
    if (file == null) {
      throw new IOException(memDir.resolve("memory.stat") + " has no file figure");
    }
    String max = read(memDir, "memory.max").strip();
    long limit = max.equals("max") ? -1 : number(max, memDir.resolve("memory.max"));
    return new Reading(usec * 1000, usage, file, limit, at);
  }

  /**
   * The container's folder under a hierarchy: Docker's cgroupfs name, else its systemd one; each
   * folder on the way must be a real folder, not a symlink.
   */
  private static Path containerDir(@Nullable Path root, String containerId) throws IOException {
    if (root == null) {
      throw new IOException("no cgroup hierarchy");
    }
    List<List<String>> candidates = List.of(List.of("docker", containerId), List.of("system.slice", "docker-" + containerId + ".scope"));
    List<String> tried = new ArrayList<>();
    for (List<String> parts : candidates) {
      Path p = root;
      boolean ok = true;
      for (String part : parts) {
        p = p.resolve(part);
        BasicFileAttributes a;
        try {
          a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException missing) {
          ok = false;
          break;
        }
        if (a.isSymbolicLink()) {
          throw new IOException(p + " is a symlink; cgroup paths are never followed through one");
        }
        if (!a.isDirectory()) {
          ok = false;
          break;
        }
      }
      if (ok) {
        return p;
      }
      tried.add(p.toString());
    }
    throw new IOException("container " + containerId + " has no cgroup at " + String.join(" or ", tried));
  }

  /** A cgroup file's text, opened without following a symlink, at most {@link #MAX_FILE} bytes. */
  private static String read(Path dir, String name) throws IOException {
    Path file = dir.resolve(name);
    try (SeekableByteChannel ch = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        InputStream in = Channels.newInputStream(ch)) {
      byte[] got = in.readNBytes(MAX_FILE + 1);
      if (got.length > MAX_FILE) {
        throw new IOException(file + " is longer than " + MAX_FILE + " bytes");
      }
      return new String(got, StandardCharsets.US_ASCII);
    }
  }

  /** {@code key value} lines, as {@code memory.stat} and {@code cpu.stat}; lines that are not are skipped. */
  private static Map<String, Long> stat(String text) {
    Map<String, Long> out = new java.util.HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.strip().split(" ");
      if (f.length == 2) {
        try {
          out.put(f[0], Long.parseLong(f[1]));
        } catch (NumberFormatException ignored) {
          // not a counter
        }
      }
    }
    return out;
  }

  private static long number(String text, Path from) throws IOException {
    try {
      long v = Long.parseLong(text);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new IOException(from + " holds '" + (text.length() > 40 ? text.substring(0, 40) + "..." : text) + "', not a count");
  }
}
