package io.sandboxes.local.internal.daemon;

import java.util.Map;

/**
 * How a process ended, from {@code waitpid}: an exit code or the signal that ended it, never
 * one dressed as the other.
 *
 * @param exited whether it called exit (then {@code exitCode} holds the code)
 * @param exitCode the exit code when {@code exited}, else 0
 * @param signal the signal that ended it when not {@code exited}, else 0
 * @param coreDumped whether that signal left a core dump
 */
public record ExitStatus(boolean exited, int exitCode, int signal, boolean coreDumped) {
  private static final Map<Integer, String> NAMES = Map.ofEntries(
      Map.entry(1, "hangup"), Map.entry(2, "interrupt"), Map.entry(3, "quit"), Map.entry(4, "illegal instruction"),
      Map.entry(6, "aborted"), Map.entry(7, "bus error"), Map.entry(8, "floating point exception"),
      Map.entry(9, "killed"), Map.entry(10, "user defined signal 1"), Map.entry(11, "segmentation fault"),
      Map.entry(12, "user defined signal 2"), Map.entry(13, "broken pipe"), Map.entry(14, "alarm clock"),
      Map.entry(15, "terminated"));

  /** envd's wording: {@code exit status 3}, {@code signal: killed}. */
  public String describe() {
    if (exited) {
      return "exit status " + exitCode;
    }
    return "signal: " + NAMES.getOrDefault(signal, "signal " + signal) + (coreDumped ? " (core dumped)" : "");
  }
}
