package io.sandboxes.e2b;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Pty#create(PtyOptions)} starts a terminal, as E2B's {@code pty.create({cols, rows,
 * onData, timeoutMs, envs, cwd, user})}. Immutable; each {@code with...} method returns a validated
 * copy.
 *
 * @param cols the terminal's columns, 1 to 10,000
 * @param rows the terminal's rows, 1 to 10,000
 * @param cwd the shell's working directory, or null for the user's home
 * @param env environment variables added to the shell's ({@code TERM}, {@code LANG} and
 *     {@code LC_ALL} default to {@code xterm-256color} and {@code C.UTF-8}, as on E2B)
 * @param user the user the shell runs as, or null for the sandbox's default
 * @param timeout how long the shell may live before the sandbox kills it, {@link Duration#ZERO} for
 *     no deadline; 60 seconds unless set, as E2B's SDK
 * @param onData called with the terminal's output as it arrives (UTF-8 text, whole characters), on
 *     the handle's reader thread, or null
 * @since 0.1
 */
public record PtyOptions(int cols, int rows, @Nullable String cwd, Map<String, String> env, @Nullable String user,
    Duration timeout, @Nullable Consumer<String> onData) {

  /** E2B's SDK's default deadline of a terminal: 60 seconds. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  /** Validates and copies the components. */
  public PtyOptions {
    if (cols < 1 || rows < 1 || cols > 10_000 || rows > 10_000) {
      throw new IllegalArgumentException("a terminal needs 1 to 10000 cols and rows, got " + cols + "x" + rows);
    }
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    if (cwd != null && cwd.isEmpty()) {
      throw new IllegalArgumentException("cwd must not be empty; leave it unset for the user's home");
    }
    if (user != null && user.isBlank()) {
      throw new IllegalArgumentException("user must not be blank; leave it unset for the sandbox's default");
    }
  }

  /**
   * Returns options for a terminal of this size, with the defaults otherwise.
   *
   * @param cols columns, 1 to 10,000
   * @param rows rows, 1 to 10,000
   * @return the options
   */
  public static PtyOptions of(int cols, int rows) {
    return new PtyOptions(cols, rows, null, Map.of(), null, DEFAULT_TIMEOUT, null);
  }

  /**
   * Returns a copy that starts the shell in this folder.
   *
   * @param cwd an absolute path
   * @return the copy
   */
  public PtyOptions withCwd(String cwd) {
    return new PtyOptions(cols, rows, Objects.requireNonNull(cwd, "cwd"), env, user, timeout, onData);
  }

  /**
   * Returns a copy with these environment variables, replacing the ones set before.
   *
   * @param env names and values
   * @return the copy
   */
  public PtyOptions withEnv(Map<String, String> env) {
    return new PtyOptions(cols, rows, cwd, env, user, timeout, onData);
  }

  /**
   * Returns a copy that runs the shell as this user.
   *
   * @param user a user of the sandbox, e.g. {@code "root"}
   * @return the copy
   */
  public PtyOptions withUser(String user) {
    return new PtyOptions(cols, rows, cwd, env, Objects.requireNonNull(user, "user"), timeout, onData);
  }

  /**
   * Returns a copy with this deadline.
   *
   * @param timeout how long the shell may live, {@link Duration#ZERO} for no deadline
   * @return the copy
   */
  public PtyOptions withTimeout(Duration timeout) {
    return new PtyOptions(cols, rows, cwd, env, user, timeout, onData);
  }

  /**
   * Returns a copy that hands the terminal's output to this listener as it arrives.
   *
   * @param onData the listener; an exception it throws kills the shell and is what
   *     {@link CommandHandle#waitFor()} throws
   * @return the copy
   */
  public PtyOptions withOnData(Consumer<String> onData) {
    return new PtyOptions(cols, rows, cwd, env, user, timeout, Objects.requireNonNull(onData, "onData"));
  }
}
