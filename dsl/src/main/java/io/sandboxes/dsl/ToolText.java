package io.sandboxes.dsl;

import io.sandboxes.ExecResult;

/** The compact text a model gets back from a tool: bounded, and saying what was cut. */
final class ToolText {
  private ToolText() {}

  /**
   * {@code text} whole when it fits in {@code limit} characters; otherwise its head and tail
   * around a marker that gives the full length, since a model needs both the start of an output
   * and its end (where errors usually are).
   */
  static String bounded(String text, int limit) {
    if (text.length() <= limit) {
      return text;
    }
    int head = limit / 2;
    int tail = limit - head;
    return text.substring(0, head) + "\n[... " + (text.length() - limit) + " characters cut; " + text.length()
        + " in all ...]\n" + text.substring(text.length() - tail);
  }

  /** A command's outcome: its exit code, then each non-empty stream, each bounded. */
  static String result(ExecResult r, int limit) {
    StringBuilder b = new StringBuilder("exit code: ").append(r.exitCode());
    if (!r.stdout().isEmpty()) {
      b.append("\nstdout:\n").append(bounded(r.stdout(), limit));
    }
    if (!r.stderr().isEmpty()) {
      b.append("\nstderr:\n").append(bounded(r.stderr(), limit));
    }
    return b.toString();
  }

  /**
   * A code interpreter's run: what it printed, the main result's text, and an exception (name,
   * value and traceback; an exception is the code's outcome, as a non-zero exit is a command's, so
   * it is not an {@code error:} line).
   */
  static String execution(io.sandboxes.CodeExecution e, int limit) {
    StringBuilder b = new StringBuilder();
    if (!e.stdoutText().isEmpty()) {
      b.append("stdout:\n").append(bounded(e.stdoutText(), limit));
    }
    if (!e.stderrText().isEmpty()) {
      b.append(b.isEmpty() ? "" : "\n").append("stderr:\n").append(bounded(e.stderrText(), limit));
    }
    if (e.text() != null) {
      b.append(b.isEmpty() ? "" : "\n").append("result: ").append(bounded(e.text(), limit));
    }
    if (e.error() != null) {
      b.append(b.isEmpty() ? "" : "\n").append("exception: ").append(e.error().name()).append(": ").append(e.error().value())
          .append('\n').append(bounded(e.error().traceback(), limit));
    }
    return b.isEmpty() ? "(no output)" : b.toString();
  }

  /** A failure, as text the model can act on instead of an exception that ends the conversation. */
  static String failure(RuntimeException e, int limit) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return "error: " + bounded(message, limit);
  }
}
