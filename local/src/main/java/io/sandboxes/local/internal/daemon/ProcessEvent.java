package io.sandboxes.local.internal.daemon;

/** What a process stream delivers: output, then its end. */
public sealed interface ProcessEvent {
  /** Output; {@code fd} is 1 (stdout), 2 (stderr) or 3 (the PTY, both merged). */
  record Output(int fd, byte[] data) implements ProcessEvent {}

  /** The process ended and every holder of its output has closed it. Always the last event. */
  record Exit(ExitStatus status) implements ProcessEvent {}
}
