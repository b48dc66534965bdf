package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How to run a command: working directory, extra environment, user and deadline. Immutable; each
 * {@code with...} method returns a copy.
 *
 * <pre>{@code
 * sandbox.exec("make test", ExecOptions.defaults().withCwd("/home/user/app").withTimeout(Duration.ofMinutes(5)));
 * }</pre>
 *
 * @param cwd the working directory, or {@code null} for the user's home
 * @param env extra environment variables for this command only
 * @param user the user to run as, or {@code null} for the sandbox's default user
 * @param timeout how long the command may run before the sandbox kills it; {@link Duration#ZERO}
 *     means no limit
 * @since 0.1
 */
public record ExecOptions(@Nullable String cwd, Map<String, String> env, @Nullable String user, Duration timeout) {

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

  /** @return options with no cwd, env or user, and the 60 s default deadline */
  public static ExecOptions defaults() {
    return new ExecOptions(null, Map.of(), null, DEFAULT_TIMEOUT);
  }

  /**
   * @param cwd the working directory
   * @return a copy with it
   */
  public ExecOptions withCwd(String cwd) {
    return new ExecOptions(Objects.requireNonNull(cwd, "cwd"), env, user, timeout);
  }

  /**
   * @param env extra environment variables
   * @return a copy with them
   */
  public ExecOptions withEnv(Map<String, String> env) {
    return new ExecOptions(cwd, env, user, timeout);
  }

  /**
   * @param user the user to run as, e.g. {@code "root"}
   * @return a copy with it
   */
  public ExecOptions withUser(String user) {
    return new ExecOptions(cwd, env, Objects.requireNonNull(user, "user"), timeout);
  }

  /**
   * @param timeout the command's deadline, {@link Duration#ZERO} for none
   * @return a copy with it
   */
  public ExecOptions withTimeout(Duration timeout) {
    return new ExecOptions(cwd, env, user, timeout);
  }
}
