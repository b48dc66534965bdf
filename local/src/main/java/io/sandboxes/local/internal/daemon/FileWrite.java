package io.sandboxes.local.internal.daemon;

import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A file write's receiving end: credit back from the daemon as it writes, then one entry and
 * OK. A second entry, more credit than was given, or any other frame is a protocol violation.
 */
final class FileWrite implements FrameChannel.Sink {
  private final FrameChannel conn;
  final CompletableFuture<EntryInfo> done = new CompletableFuture<>();
  private @Nullable EntryInfo entry;
  private long credit = Wire.WINDOW;
  int stream;

  FileWrite(FrameChannel conn) {
    this.conn = conn;
  }

  @Override
  public synchronized void frame(Frame f) throws ProtocolException {
    switch (f.type()) {
      case Wire.DCREDIT -> {
        Wire.In p = new Wire.In(f.payload());
        credit += p.u32();
        p.end();
        if (credit > Wire.WINDOW) {
          throw new ProtocolException("a daemon returned more credit than it was given");
        }
        notifyAll();
      }
      case Wire.ENTRY -> {
        if (entry != null) {
          throw new ProtocolException("a second entry in answer to a write");
        }
        entry = EntryInfo.whole(f.payload());
      }
      case Wire.OK -> {
        conn.forget(stream);
        if (entry == null) {
          throw new ProtocolException("a write answered without its entry");
        }
        done.complete(entry);
        notifyAll();
      }
      case Wire.ERROR -> {
        DaemonException e = FrameChannel.error(f);
        conn.forget(stream);
        done.completeExceptionally(e);
        notifyAll();
      }
      default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a write");
    }
  }

  @Override
  public synchronized void closed(DaemonException e) {
    done.completeExceptionally(e);
    notifyAll();
  }

  /**
   * Waits for credit for n more bytes; false once the write has been answered.
   *
   * @throws DaemonException {@link DaemonException.Kind#TIMEOUT} when the daemon gave no credit back in time
   */
  synchronized boolean take(int n, Duration timeout) throws InterruptedIOException, DaemonException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.isDone() && credit < n) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new DaemonException(DaemonException.Kind.TIMEOUT,
            "the sandbox daemon took none of a write for " + timeout.toSeconds() + " s; the write is abandoned");
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(this, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while writing to the sandbox");
      }
    }
    if (done.isDone()) {
      return false;
    }
    credit -= n;
    return true;
  }
}
