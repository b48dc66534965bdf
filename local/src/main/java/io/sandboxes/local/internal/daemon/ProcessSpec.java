package io.sandboxes.local.internal.daemon;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A process for the daemon to start, in its own session and process group.
 *
 * @param argv the program and its arguments; a program without a slash is looked up on the
 *     process's own PATH
 * @param env variables on top of PATH, HOME, USER and LOGNAME (later entries win)
 * @param cwd the working folder, relative to the user's home when relative; null for the home
 * @param user a user name or number; the daemon resolves it from the sandbox's /etc/passwd (a
 *     number not in it stands for itself); null for root
 * @param tag an optional label reported by {@link DaemonConnection#processes()}
 * @param stdin whether stdin is a pipe the host can write and close (else /dev/null)
 * @param pty a terminal of that size instead of pipes (stdout and stderr merged, stdin open)
 */
public record ProcessSpec(
    List<String> argv,
    Map<String, String> env,
    @Nullable String cwd,
    @Nullable String user,
    @Nullable String tag,
    boolean stdin,
    @Nullable PtySize pty) {

  /** A terminal size. */
  public record PtySize(int cols, int rows) {}

  public ProcessSpec {
    argv = List.copyOf(argv);
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("a process needs a program");
    }
  }

  /** A command as root, no stdin, no terminal. */
  public static ProcessSpec of(String... argv) {
    return new ProcessSpec(List.of(argv), Map.of(), null, null, null, false, null);
  }

  public ProcessSpec asUser(String user) {
    return new ProcessSpec(argv, env, cwd, Objects.requireNonNull(user), tag, stdin, pty);
  }

  public ProcessSpec withStdin() {
    return new ProcessSpec(argv, env, cwd, user, tag, true, pty);
  }

  public ProcessSpec withPty(int cols, int rows) {
    return new ProcessSpec(argv, env, cwd, user, tag, true, new PtySize(cols, rows));
  }

  public ProcessSpec withTag(String tag) {
    return new ProcessSpec(argv, env, cwd, user, tag, stdin, pty);
  }

  public ProcessSpec withCwd(String cwd) {
    return new ProcessSpec(argv, env, cwd, user, tag, stdin, pty);
  }

  public ProcessSpec withEnv(Map<String, String> env) {
    return new ProcessSpec(argv, env, cwd, user, tag, stdin, pty);
  }
}
