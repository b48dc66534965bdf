package io.sandboxes;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a code execution produced: its results (the main result and displays such as charts),
 * what it printed, the error it raised (as data; see {@link #orThrow()}), and its execution
 * count in the context.
 *
 * @param results every result, in the order they came
 * @param stdout each piece of standard output, in order
 * @param stderr each piece of standard error, in order
 * @param error the error the code raised, or {@code null} when it ran to its end
 * @param executionCount the context's execution counter for this run, or 0 when not reported
 * @since 0.1
 */
public record CodeExecution(List<CodeResult> results, List<String> stdout, List<String> stderr, @Nullable CodeError error,
    int executionCount) {

  /** Copies the lists. */
  public CodeExecution {
    results = List.copyOf(results);
    stdout = List.copyOf(stdout);
    stderr = List.copyOf(stderr);
  }

  /**
   * Returns the main result (the value of the last expression), if there was one.
   *
   * @return the main result (the value of the last expression), if there was one
   */
  public Optional<CodeResult> mainResult() {
    return results.stream().filter(CodeResult::mainResult).findFirst();
  }

  /**
   * Returns the main result's text, or {@code null} when there is none.
   *
   * @return the main result's text, or {@code null} when there is none
   */
  public @Nullable String text() {
    return mainResult().map(CodeResult::text).orElse(null);
  }

  /**
   * Returns all standard output joined.
   *
   * @return all standard output joined
   */
  public String stdoutText() {
    return String.join("", stdout);
  }

  /**
   * Returns all standard error joined.
   *
   * @return all standard error joined
   */
  public String stderrText() {
    return String.join("", stderr);
  }

  /**
   * Returns whether the code ran without raising an error.
   *
   * @return whether the code ran without raising an error
   */
  public boolean isSuccess() {
    return error == null;
  }

  /**
   * Returns this execution when it raised no error.
   *
   * @return this execution
   * @throws CodeExecutionException when the code raised an error
   */
  public CodeExecution orThrow() {
    if (error != null) {
      throw new CodeExecutionException(this);
    }
    return this;
  }

  /**
   * Returns the error as {@code name: value}; only when there is one.
   *
   * @return the error as {@code name: value}; only when there is one
   */
  String errorSummary() {
    CodeError e = Objects.requireNonNull(error);
    return e.name() + ": " + e.value();
  }
}
