package io.sandboxes;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * A process started with {@link Sandbox#spawn}: its output as it comes, its input, and its end.
 * Output reaches the listeners registered when it arrives (decoded as UTF-8, a character split
 * across chunks arriving whole); output that comes before a stream's first listener is kept for
 * that listener. A PTY has one stream, reported as stdout.
 *
 * <p>{@link #close()} kills the process if it still runs and stops listening.
 *
 * @since 0.1
 */
public interface SpawnHandle extends AutoCloseable {

  /**
   * Returns the process's id.
   *
   * @return the process id inside the sandbox
   */
  int pid();

  /**
   * Adds a listener for standard output (for a PTY, everything the terminal shows).
   *
   * @param listener receives each piece of standard output (or terminal output)
   */
  void onStdout(Consumer<String> listener);

  /**
   * Adds a listener for standard error.
   *
   * @param listener receives each piece of standard error (never called for a PTY)
   */
  void onStderr(Consumer<String> listener);

  /**
   * Adds a listener for the process's end.
   *
   * @param listener called exactly once when the process ends, whatever way; a listener added
   *     after the end is called at once
   */
  void onClose(Consumer<ProcessExit> listener);

  /**
   * Sends text, as UTF-8: to stdin for pipes, to the terminal for a PTY (so {@code "\u0003"} is
   * Ctrl-C). After the process has ended this does nothing.
   *
   * @param data the text to send
   */
  void write(String data);

  /** Sends end-of-file to stdin (pipes only; a PTY takes Ctrl-D, {@code "\u0004"}, instead). */
  void closeStdin();

  /** Kills the process (SIGKILL). After it has ended this does nothing. */
  void kill();

  /**
   * Returns the terminal's controls.
   *
   * @return the terminal controls, present only for a PTY spawn
   */
  Optional<Terminal> terminal();

  /** Kills the process if it still runs and stops listening. Idempotent. */
  @Override
  void close();

  /** The controls of a PTY. */
  interface Terminal {
    /**
     * Resizes the terminal; a failure (the process raced to exit) is ignored.
     *
     * @param cols the new width, in columns
     * @param rows the new height, in rows
     */
    void resize(int cols, int rows);
  }
}
