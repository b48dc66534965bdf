package io.sandboxes.dsl;

import io.sandboxes.CodeTimeoutException;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecResult;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The compact text a model gets back from a tool: bounded, saying what was cut, and plain (no
 * terminal colour codes, no progress bars redrawn in place).
 */
final class ToolText {
  private ToolText() {}

  /**
   * Terminal escape sequences: CSI ({@code ESC [ ... final}, colours and cursor moves), OSC
   * ({@code ESC ] ... BEL} or {@code ESC \}, titles and links) and the two-character ones.
   */
  private static final Pattern ANSI = Pattern.compile("\u001B(?:\\[[0-?]*[ -/]*[@-~]|\\][^\u0007\u001B]*(?:\u0007|\u001B\\\\)?|[@-Z\\\\-_])");
  /** IPython's rule above a traceback. */
  private static final Pattern RULE = Pattern.compile("-{20,}");
  /** IPython's header of a traceback: the exception's name, spaces, then Python's words. */
  private static final Pattern HEADER = Pattern.compile("\\S+\\s+Traceback \\(most recent call last\\)");
  /** A line of source shown around a frame's line: its number right-aligned in seven columns. */
  private static final Pattern CONTEXT = Pattern.compile("(?: {6}\\d| {5}\\d{2}| {4}\\d{3}| {3}\\d{4}| {2}\\d{5}| \\d{6})(?: .*)?");
  /** The sentence between two exceptions of a chain, kept apart by blank lines. */
  private static final Pattern CHAINED = Pattern.compile("(The above exception|During handling of the above exception).*");
  /** The frame's own line, marked with an arrow ({@code ---->} or {@code ->}) before its number. */
  private static final Pattern MARKED = Pattern.compile("-+> *(\\d+)(?: (.*))?");

  /**
   * {@code text} without terminal escape sequences, with {@code \r\n} as {@code \n}, and each line
   * redrawn with a bare {@code \r} (a progress bar) reduced to what it showed last.
   */
  static String plain(String text) {
    String s = ANSI.matcher(text).replaceAll("");
    if (s.indexOf('\r') < 0) {
      return s;
    }
    StringBuilder out = new StringBuilder(s.length());
    for (String line : s.replace("\r\n", "\n").split("\n", -1)) {
      if (!out.isEmpty()) {
        out.append('\n');
      }
      String drawn = line.replaceAll("\r+$", "");
      out.append(drawn.substring(drawn.lastIndexOf('\r') + 1));
    }
    return out.toString();
  }

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

  /** A command's outcome: its exit code, then each non-empty stream, plain and bounded. */
  static String result(ExecResult r, int limit) {
    StringBuilder b = new StringBuilder("exit code: ").append(r.exitCode());
    streams(b, r.stdout(), r.stderr(), limit);
    return b.toString();
  }

  private static void streams(StringBuilder b, String stdout, String stderr, int limit) {
    if (!stdout.isEmpty()) {
      b.append(b.isEmpty() ? "" : "\n").append("stdout:\n").append(bounded(plain(stdout), limit));
    }
    if (!stderr.isEmpty()) {
      b.append(b.isEmpty() ? "" : "\n").append("stderr:\n").append(bounded(plain(stderr), limit));
    }
  }

  /**
   * A code interpreter's run: what it printed, the main result's text, and an exception (name,
   * value and a short traceback; an exception is the code's outcome, as a non-zero exit is a
   * command's, so it is not an {@code error:} line).
   */
  static String execution(io.sandboxes.CodeExecution e, int limit) {
    StringBuilder b = new StringBuilder();
    streams(b, e.stdoutText(), e.stderrText(), limit);
    if (e.text() != null) {
      b.append(b.isEmpty() ? "" : "\n").append("result: ").append(bounded(plain(e.text()), limit));
    }
    if (e.error() != null) {
      b.append(b.isEmpty() ? "" : "\n").append("exception: ").append(plain(e.error().name())).append(": ")
          .append(plain(e.error().value()));
      String tb = traceback(e.error().traceback());
      if (!tb.isEmpty()) {
        b.append('\n').append(bounded(tb, limit));
      }
    }
    return b.isEmpty() ? "(no output)" : b.toString();
  }

  /**
   * A traceback as a model reads it best: plain, and with each frame as its location and its
   * marked line only. IPython shows every frame with a few lines of source around it (and in
   * colour): a {@code KeyError} raised inside pandas is some 40 lines that way, a dozen this way.
   * A traceback of another shape (Python's own) loses only its colour codes.
   */
  static String traceback(String traceback) {
    List<String> out = new ArrayList<>();
    for (String raw : plain(traceback).split("\n", -1)) {
      String line = raw.stripTrailing();
      if (RULE.matcher(line).matches() || CONTEXT.matcher(line).matches()) {
        continue;
      }
      if (HEADER.matcher(line).matches()) {
        line = "Traceback (most recent call last):";
      } else {
        java.util.regex.Matcher m = MARKED.matcher(line);
        if (m.matches()) {
          line = "  line " + m.group(1) + ": " + (m.group(2) == null ? "" : m.group(2).strip());
        }
      }
      if (line.isEmpty()) {
        continue; // frames follow one another without the blank lines between them
      }
      if (CHAINED.matcher(line).matches()) {
        out.add("");
        out.add(line);
        out.add("");
        continue;
      }
      out.add(line);
    }
    return String.join("\n", out);
  }

  /**
   * A failure, as text the model can act on instead of an exception that ends the conversation.
   * A command or code run that timed out keeps what it printed before it was stopped.
   */
  static String failure(RuntimeException e, int limit) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    StringBuilder b = new StringBuilder("error: ").append(bounded(plain(message), limit));
    if (e instanceof CommandTimeoutException t) {
      streamsSoFar(b, t.stdout(), t.stderr(), limit);
    } else if (e instanceof CodeTimeoutException t) {
      streamsSoFar(b, t.partial().stdoutText(), t.partial().stderrText(), limit);
    }
    return b.toString();
  }

  private static void streamsSoFar(StringBuilder b, String stdout, String stderr, int limit) {
    if (!stdout.isEmpty()) {
      b.append("\nstdout before it was stopped:\n").append(bounded(plain(stdout), limit));
    }
    if (!stderr.isEmpty()) {
      b.append("\nstderr before it was stopped:\n").append(bounded(plain(stderr), limit));
    }
  }
}
