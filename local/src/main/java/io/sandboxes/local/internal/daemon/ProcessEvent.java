package io.sandboxes.local.internal.daemon;

/** What a process stream delivers: output, then its end. */
public sealed interface ProcessEvent {
  /**
   * Output: {@code len} bytes of {@code buf} from {@code off} (the frame they came in, not copied);
   * {@code fd} is 1 (stdout), 2 (stderr) or 3 (the PTY, both merged).
   */
  record Output(int fd, byte[] buf, int off, int len) implements ProcessEvent {
    /** The bytes, copied out. */
    public byte[] data() {
      return java.util.Arrays.copyOfRange(buf, off, off + len);
    }
  }

  /** The process ended and every holder of its output has closed it. Always the last event. */
  record Exit(ExitStatus status) implements ProcessEvent {}
}
