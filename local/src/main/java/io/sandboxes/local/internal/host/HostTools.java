package io.sandboxes.local.internal.host;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The host tools the server runs ({@code iptables}, {@code nsenter}, {@code ip}, {@code debootstrap},
 * {@code tar}, {@code du}, ...), each found once by absolute path: on {@code PATH}, then in the
 * system folders, since a server started from cron, {@code su} without {@code -}, a systemd unit or
 * an IDE often has a {@code PATH} without {@code /usr/sbin}. What was found is what is run, and a
 * tool found nowhere is named in the error with every folder looked in. The tools are run with
 * those folders on their own {@code PATH} too, since some (debootstrap) run others by name.
 */
public final class HostTools {
  private static final List<String> SYSTEM_DIRS = List.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin");
  private static final long DEADLINE_SECONDS = 30;
  private static final Map<String, Optional<String>> FOUND = new ConcurrentHashMap<>();

  private HostTools() {}

  /** The folders looked in, in order: {@code PATH}'s, then the system folders it lacks. */
  static List<String> searchPath() {
    Set<String> dirs = new LinkedHashSet<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(":")) {
        if (!d.isEmpty()) {
          dirs.add(d);
        }
      }
    }
    dirs.addAll(SYSTEM_DIRS);
    return List.copyOf(dirs);
  }

  /** @return the tool's absolute path, or null when it is nowhere to be found (looked for once) */
  public static @Nullable String find(String tool) {
    return FOUND.computeIfAbsent(tool, t -> {
      for (String dir : searchPath()) {
        File f = new File(dir, t);
        if (f.isFile() && f.canExecute()) {
          return Optional.of(f.getAbsolutePath());
        }
      }
      return Optional.empty();
    }).orElse(null);
  }

  /**
   * @return the tool's absolute path
   * @throws IOException naming the tool and every folder looked in, when it is nowhere
   */
  public static String require(String tool) throws IOException {
    String exe = find(tool);
    if (exe == null) {
      throw new IOException(tool + " is not installed (looked in " + String.join(", ", searchPath()) + ")");
    }
    return exe;
  }

  /**
   * A process builder for {@code tool} (found as {@link #require} finds it) and its arguments,
   * with the system folders on the child's {@code PATH}.
   */
  public static ProcessBuilder command(String tool, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(require(tool));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("PATH", String.join(":", searchPath()));
    return pb;
  }

  /** What a command printed and how it ended. */
  public record Result(int exitCode, String output) {
    /** @return whether it exited 0 */
    public boolean ok() {
      return exitCode == 0;
    }
  }

  /**
   * Runs {@code tool} with its arguments, feeding it {@code stdin}, within 30 s.
   *
   * @return its exit code and its output (stdout and stderr together, at most 1 MiB)
   * @throws IOException when the tool is missing, cannot start, or outlives the deadline
   */
  public static Result run(String tool, List<String> args, @Nullable String stdin) throws IOException {
    Process p = command(tool, args).redirectErrorStream(true).start();
    try {
      if (stdin != null) {
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      p.getOutputStream().close();
      String out;
      try (InputStream in = p.getInputStream()) {
        out = new String(in.readNBytes(1 << 20), StandardCharsets.UTF_8);
      }
      if (!p.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
        throw new IOException(tool + " did not finish within " + DEADLINE_SECONDS + " s");
      }
      return new Result(p.exitValue(), out);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + tool, e);
    } finally {
      p.destroyForcibly();
    }
  }

  /** As {@link #run}, failing unless the command exits 0. */
  public static String check(String tool, List<String> args, @Nullable String stdin, String what) throws IOException {
    Result r = run(tool, args, stdin);
    if (!r.ok()) {
      throw new IOException(what + " failed (" + tool + " exited " + r.exitCode() + "): " + r.output().strip());
    }
    return r.output();
  }
}
