package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How to run code in a code interpreter: in which context (or the default context of a
 * language), with which extra environment, within which timeout, and where its output and
 * results go while it runs. Immutable; each method returns a copy.
 *
 * {@snippet :
 * sandbox.runCode("for i in range(3): print(i)", RunCodeOptions.defaults()
 *     .withTimeout(Duration.ofSeconds(10))
 *     .onStdout(System.out::print));
 * }
 *
 * @param context the context to run in, or {@code null} for the default context of {@code language}
 * @param language the language whose default context runs the code, or {@code null} for Python;
 *     not together with {@code context}. The local runtime serves {@code python}, {@code javascript}
 *     (also {@code js}) and {@code bash}, each language's default context made on its first use
 * @param env environment variables set for this execution only
 * @param timeout how long the execution may take; when it passes, the kernel is interrupted and
 *     {@link CodeTimeoutException} is thrown; {@link Duration#ZERO} means no limit
 * @param onStdout called with each piece of standard output as it arrives, or {@code null}
 * @param onStderr the same for standard error, or {@code null}
 * @param onResult called with each result as it arrives, or {@code null}
 * @param onError called with the error the code raised, or {@code null}
 * @since 0.1
 */
public record RunCodeOptions(
    @Nullable String context,
    @Nullable String language,
    Map<String, String> env,
    Duration timeout,
    @Nullable Consumer<String> onStdout,
    @Nullable Consumer<String> onStderr,
    @Nullable Consumer<CodeResult> onResult,
    @Nullable Consumer<CodeError> onError) {

  /** The default timeout of an execution, as E2B's SDKs use: 60 seconds. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  /** Validates and copies the components. */
  public RunCodeOptions {
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    if (context != null && language != null) {
      throw new IllegalArgumentException("give a context or a language, not both");
    }
  }

  /**
   * Returns the defaults: the default Python context, no extra environment, 60 s, no listeners.
   *
   * @return the defaults: the default Python context, no extra environment, 60 s, no listeners
   */
  public static RunCodeOptions defaults() {
    return new RunCodeOptions(null, null, Map.of(), DEFAULT_TIMEOUT, null, null, null, null);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param context the context to run in
   * @return a copy that runs in that context
   */
  public RunCodeOptions inContext(CodeContext context) {
    return new RunCodeOptions(context.id(), null, env, timeout, onStdout, onStderr, onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param language the language whose default context runs the code
   * @return a copy that runs in that language's default context
   */
  public RunCodeOptions withLanguage(String language) {
    return new RunCodeOptions(null, Objects.requireNonNull(language, "language"), env, timeout, onStdout, onStderr, onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param env environment variables for this execution only
   * @return a copy with them
   */
  public RunCodeOptions withEnv(Map<String, String> env) {
    return new RunCodeOptions(context, language, env, timeout, onStdout, onStderr, onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param timeout how long the execution may take; {@link Duration#ZERO} for no limit
   * @return a copy with it
   */
  public RunCodeOptions withTimeout(Duration timeout) {
    return new RunCodeOptions(context, language, env, timeout, onStdout, onStderr, onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param listener called with each piece of standard output as it arrives
   * @return a copy with it
   */
  public RunCodeOptions onStdout(Consumer<String> listener) {
    return new RunCodeOptions(context, language, env, timeout, Objects.requireNonNull(listener), onStderr, onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param listener called with each piece of standard error as it arrives
   * @return a copy with it
   */
  public RunCodeOptions onStderr(Consumer<String> listener) {
    return new RunCodeOptions(context, language, env, timeout, onStdout, Objects.requireNonNull(listener), onResult, onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param listener called with each result as it arrives
   * @return a copy with it
   */
  public RunCodeOptions onResult(Consumer<CodeResult> listener) {
    return new RunCodeOptions(context, language, env, timeout, onStdout, onStderr, Objects.requireNonNull(listener), onError);
  }

  /**
   * Returns a copy with this setting.
   *
   * @param listener called with the error the code raised
   * @return a copy with it
   */
  public RunCodeOptions onError(Consumer<CodeError> listener) {
    return new RunCodeOptions(context, language, env, timeout, onStdout, onStderr, onResult, Objects.requireNonNull(listener));
  }
}
