package io.sandboxes.local.internal.egress;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The host tools egress is enforced with ({@code iptables}, {@code nsenter}, {@code ip}), found
 * by absolute path and run with a deadline. Looked for on {@code PATH} and then in the system
 * folders, since a server started from cron, a systemd unit or an IDE often has a {@code PATH}
 * without {@code /usr/sbin}: what was found is what is run.
 */
final class HostCommand {
  private static final List<String> SYSTEM_DIRS = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");
  private static final long DEADLINE_SECONDS = 30;

  private HostCommand() {}

  /** @return the tool's absolute path, or null when it is nowhere to be found */
  static @Nullable String find(String tool) {
    Set<String> dirs = new LinkedHashSet<>();
    String path = System.getenv("PATH");
    if (path != null) {
      dirs.addAll(List.of(path.split(":")));
    }
    dirs.addAll(SYSTEM_DIRS);
    for (String dir : dirs) {
      if (dir.isEmpty()) {
        continue;
      }
      File f = new File(dir, tool);
      if (f.isFile() && f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    return null;
  }

  /** What a command printed and how it ended. */
  record Result(int exitCode, String output) {
    boolean ok() {
      return exitCode == 0;
    }
  }

  /**
   * Runs {@code tool} (found as {@link #find} finds it) with its arguments, feeding it {@code stdin}.
   *
   * @return its exit code and its output (stdout and stderr together)
   * @throws IOException when the tool is missing, cannot start, or outlives the deadline
   */
  static Result run(String tool, List<String> args, @Nullable String stdin) throws IOException {
    String exe = find(tool);
    if (exe == null) {
      throw new IOException(tool + " is not installed (looked on PATH and in " + String.join(", ", SYSTEM_DIRS) + ")");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(exe);
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
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
  static String check(String tool, List<String> args, @Nullable String stdin, String what) throws IOException {
    Result r = run(tool, args, stdin);
    if (!r.ok()) {
      throw new IOException(what + " failed (" + tool + " exited " + r.exitCode() + "): " + r.output().strip());
    }
    return r.output();
  }
}
