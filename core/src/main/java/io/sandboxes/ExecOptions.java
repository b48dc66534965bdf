package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How to run a command: working directory, extra environment, user, deadline, and where its
 * output goes while it runs. Immutable; each {@code with...} method returns a copy.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=exec-options :
 * sandbox.exec("make test", ExecOptions.defaults()
 *     .withCwd("/home/user/app")
 *     .withTimeout(Duration.ofMinutes(5))
 *     .onStdout(System.out::print)      // follow a long build live
 *     .onStderr(System.err::print));
 * }
 *
 * @param cwd the working directory, or {@code null} for the user's home
 * @param env extra environment variables for this command only
 * @param user the user to run as, or {@code null} for the sandbox's default user
 * @param timeout how long the command may run before the sandbox kills it; {@link Duration#ZERO}
 *     means no limit. A command killed this way makes {@code exec} throw
 *     {@link CommandTimeoutException}, with the output it wrote before.
 * @param onStdout called with each piece of standard output as it arrives (whole characters,
 *     in order, on one thread), or {@code null}; the result still holds all of it
 * @param onStderr the same for standard error, or {@code null}
 * @param stdin whether the command's standard input stays open for
 *     {@link io.sandboxes.e2b.Commands#sendStdin(int, String) sendStdin} and
 *     {@link io.sandboxes.e2b.Commands#closeStdin(int) closeStdin}; {@code false} (the default, as
 *     E2B's) gives it an input that is at its end from the start
 * @since 0.1
 */
public record ExecOptions(
    @Nullable String cwd,
    Map<String, String> env,
    @Nullable String user,
    Duration timeout,
    @Nullable Consumer<String> onStdout,
    @Nullable Consumer<String> onStderr,
    boolean stdin) {

  /** The default deadline of a command, as E2B's SDKs use: 60 seconds. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  /** Validates and copies the components. */
  public ExecOptions {
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    if (cwd != null && cwd.isBlank()) {
      throw new IllegalArgumentException("cwd must not be blank");
    }
    if (user != null && user.isBlank()) {
      throw new IllegalArgumentException("user must not be blank");
    }
  }

  /**
   * Options with standard input closed, as before {@link #stdin()} existed.
   *
   * @param cwd the working directory, or {@code null} for the user's home
   * @param env extra environment variables for this command only
   * @param user the user to run as, or {@code null} for the sandbox's default user
   * @param timeout the command's deadline, {@link Duration#ZERO} for none
   * @param onStdout called with each piece of standard output, or {@code null}
   * @param onStderr called with each piece of standard error, or {@code null}
   */
  public ExecOptions(@Nullable String cwd, Map<String, String> env, @Nullable String user, Duration timeout,
      @Nullable Consumer<String> onStdout, @Nullable Consumer<String> onStderr) {
    this(cwd, env, user, timeout, onStdout, onStderr, false);
  }

  /**
   * The defaults.
   *
   * @return options with no cwd, env, user or output callbacks, and the 60 s default deadline
   */
  public static ExecOptions defaults() {
    return new ExecOptions(null, Map.of(), null, DEFAULT_TIMEOUT, null, null, false);
  }

  /**
   * Sets the working directory.
   *
   * @param cwd the working directory
   * @return a copy with it
   */
  public ExecOptions withCwd(String cwd) {
    return new ExecOptions(Objects.requireNonNull(cwd, "cwd"), env, user, timeout, onStdout, onStderr, stdin);
  }

  /**
   * Sets extra environment variables for this command.
   *
   * @param env extra environment variables
   * @return a copy with them
   */
  public ExecOptions withEnv(Map<String, String> env) {
    return new ExecOptions(cwd, env, user, timeout, onStdout, onStderr, stdin);
  }

  /**
   * Sets the user the command runs as.
   *
   * @param user the user to run as, e.g. {@code "root"}
   * @return a copy with it
   */
  public ExecOptions withUser(String user) {
    return new ExecOptions(cwd, env, Objects.requireNonNull(user, "user"), timeout, onStdout, onStderr, stdin);
  }

  /**
   * Sets the command's deadline.
   *
   * @param timeout the command's deadline, {@link Duration#ZERO} for none
   * @return a copy with it
   */
  public ExecOptions withTimeout(Duration timeout) {
    return new ExecOptions(cwd, env, user, timeout, onStdout, onStderr, stdin);
  }

  /**
   * Follows standard output while the command runs, as E2B's {@code onStdout}. The callback runs
   * on the SDK's reader thread, in order; an exception it throws kills the command and is thrown
   * from {@code exec}.
   *
   * @param listener called with each piece of text as it arrives
   * @return a copy with it
   */
  public ExecOptions onStdout(Consumer<String> listener) {
    return new ExecOptions(cwd, env, user, timeout, Objects.requireNonNull(listener, "listener"), onStderr, stdin);
  }

  /**
   * Follows standard error while the command runs, as {@link #onStdout(Consumer)} does standard
   * output.
   *
   * @param listener called with each piece of text as it arrives
   * @return a copy with it
   */
  public ExecOptions onStderr(Consumer<String> listener) {
    return new ExecOptions(cwd, env, user, timeout, onStdout, Objects.requireNonNull(listener, "listener"), stdin);
  }

  /**
   * Keeps the command's standard input open, as E2B's {@code stdin: true}, so that it can be
   * written to by pid ({@link io.sandboxes.e2b.Commands#sendStdin(int, String)}) or through a
   * background command's handle, and ended with {@code closeStdin}. A command that reads its
   * input then waits for it: close it, or the command runs until its deadline.
   *
   * @param stdin whether standard input stays open
   * @return a copy with it
   */
  public ExecOptions withStdin(boolean stdin) {
    return new ExecOptions(cwd, env, user, timeout, onStdout, onStderr, stdin);
  }
}
