package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How to start a long-lived process with {@link Sandbox#spawn}: working directory, environment,
 * lifetime, and whether it gets a terminal.
 *
 * @param cwd the working directory, or null for the user's home
 * @param env extra environment variables
 * @param timeout how long the process may live, or null for the provider's default (one hour on E2B)
 * @param pty a terminal of this size, or null for plain pipes
 * @since 0.1
 */
public record SpawnOptions(@Nullable String cwd, Map<String, String> env, @Nullable Duration timeout, @Nullable PtySize pty) {

  /** Validates and copies the components. */
  public SpawnOptions {
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
  }

  /**
   * Returns options for a process on plain pipes.
   *
   * @return pipes, no cwd or env, the provider's default lifetime
   */
  public static SpawnOptions pipes() {
    return new SpawnOptions(null, Map.of(), null, null);
  }

  /**
   * Returns options for a process on a terminal (PTY) of a given size.
   *
   * @param cols columns
   * @param rows rows
   * @return a terminal of that size
   */
  public static SpawnOptions terminal(int cols, int rows) {
    return new SpawnOptions(null, Map.of(), null, new PtySize(cols, rows));
  }

  /**
   * Returns a copy that starts the process in this folder.
   *
   * @param cwd the working directory
   * @return a copy with it
   */
  public SpawnOptions withCwd(String cwd) {
    return new SpawnOptions(Objects.requireNonNull(cwd, "cwd"), env, timeout, pty);
  }

  /**
   * Returns a copy with this extra environment, replacing the one set before.
   *
   * @param env extra environment
   * @return a copy with it
   */
  public SpawnOptions withEnv(Map<String, String> env) {
    return new SpawnOptions(cwd, env, timeout, pty);
  }

  /**
   * Returns a copy with this lifetime.
   *
   * @param timeout how long the process may live; zero for no limit
   * @return a copy with it
   */
  public SpawnOptions withTimeout(Duration timeout) {
    return new SpawnOptions(cwd, env, Objects.requireNonNull(timeout, "timeout"), pty);
  }

  /**
   * A terminal's size.
   *
   * @param cols its width, in columns (1 to 10000)
   * @param rows its height, in rows (1 to 10000)
   */
  public record PtySize(int cols, int rows) {
    /** Validates the size. */
    public PtySize {
      if (cols < 1 || rows < 1 || cols > 10_000 || rows > 10_000) {
        throw new IllegalArgumentException("a terminal needs 1 to 10000 cols and rows, got " + cols + "x" + rows);
      }
    }
  }
}
