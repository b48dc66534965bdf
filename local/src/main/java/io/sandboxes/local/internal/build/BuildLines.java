package io.sandboxes.local.internal.build;

import java.time.Duration;

/**
 * The shapes of a build's log lines, as E2B's template builder prints them, so a user reading
 * the log (or matching its lines) finds what E2B shows: each layer's heading
 * {@code [builder 2/5] RUN make [hash]} (the step's type and all its arguments joined by spaces,
 * a RUN's user and a COPY's user and mode included, as E2B joins them), {@code CACHED } before it
 * when the layer is taken as it is; {@code [base] FROM …} for the base and
 * {@code [finalize] Finalizing template build} for the registration; a command's output as
 * {@code [builder 2/5] [stdout]: line} (each line trimmed, blank lines left out); and the last
 * line {@code Build finished, took 12s} or {@code Build failed: why}.
 */
final class BuildLines {
  /** The prefix of the base's lines. */
  static final String BASE = "base";
  /** The prefix of the registration's lines. */
  static final String FINALIZE = "finalize";

  private BuildLines() {}

  /** @return the prefix of step {@code number} (from 1) of {@code total} */
  static String step(int number, int total) {
    return "builder " + number + "/" + total;
  }

  /** @return a layer's heading: {@code [prefix] text [hash]}, with {@code CACHED } before it when it is taken as it is */
  static String heading(boolean cached, String prefix, String text, String hash) {
    return (cached ? "CACHED " : "") + "[" + prefix + "] " + text + " [" + hash + "]";
  }

  /** @return a step's text: its type and its arguments, joined by spaces */
  static String text(String type, java.util.List<String> args) {
    return type + " " + String.join(" ", args);
  }

  /**
   * @return a line a command printed, trimmed, as {@code [prefix] [stdout]: line} (or
   *     {@code [stderr]}); null for a blank line, which is left out
   */
  static @org.jspecify.annotations.Nullable String output(String prefix, boolean stderr, String line) {
    String t = line.strip();
    return t.isEmpty() ? null : "[" + prefix + "] [" + (stderr ? "stderr" : "stdout") + "]: " + t;
  }

  /** @return the last line of a build that finished: how long it took, in whole seconds */
  static String finished(Duration took) {
    return "Build finished, took " + seconds(took);
  }

  /** @return the last line of a build that failed */
  static String failed(String why) {
    return "Build failed: " + why;
  }

  /** A duration cut to whole seconds, written as {@code 0s}, {@code 42s}, {@code 1m5s} or {@code 2h0m3s}. */
  static String seconds(Duration d) {
    long s = Math.max(0, d.toSeconds());
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return (s / 60) + "m" + (s % 60) + "s";
    }
    return (s / 3600) + "h" + (s % 3600 / 60) + "m" + (s % 60) + "s";
  }
}
