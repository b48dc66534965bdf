package io.sandboxes.local.internal.daemon;

import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The receiving half of a credit-controlled stream: what the reader thread delivers waits here
 * for the consumer, and credit goes back to the daemon only as the consumer takes it. The daemon
 * may never have more than {@link Wire#WINDOW} bytes unconsumed, so this queue is bounded by the
 * protocol itself; a daemon that oversteps is a protocol violation.
 */
final class Flow<T> {
  private final DaemonConnection conn;
  private final ArrayDeque<Object> queue = new ArrayDeque<>();
  private long outstanding; // bytes the daemon has sent that the consumer has not taken
  private long granted = Wire.WINDOW; // bytes the daemon may have outstanding
  private int unreturned; // bytes taken but not yet credited back
  private boolean ended;
  int stream;

  private record Failure(DaemonException e) {}

  private record End() {}

  Flow(DaemonConnection conn) {
    this.conn = conn;
  }

  /** Called on the reader thread. */
  synchronized void deliver(T item, int bytes) throws ProtocolException {
    outstanding += bytes;
    if (outstanding > granted) {
      throw new ProtocolException("a daemon sent " + outstanding + " bytes on a stream with credit for " + granted);
    }
    queue.add(new Sized(item, bytes));
    notifyAll();
  }

  private record Sized(Object item, int bytes) {}

  /** The stream ended normally after what was delivered. */
  synchronized void end() {
    ended = true;
    queue.add(new End());
    notifyAll();
  }

  synchronized void fail(DaemonException e) {
    if (!ended) {
      ended = true;
      queue.add(new Failure(e));
      notifyAll();
    }
  }

  synchronized boolean ended() {
    return ended;
  }

  /**
   * The next item, null at the end of the stream (or when the wait ran out: see
   * {@link #finished()}).
   */
  @SuppressWarnings("unchecked")
  @Nullable T next(@Nullable Duration timeout) throws DaemonException, InterruptedIOException {
    int credit = 0;
    Object o;
    synchronized (this) {
      long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
      while (queue.isEmpty()) {
        try {
          if (timeout == null) {
            wait();
          } else {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              return null;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while waiting for the sandbox daemon");
        }
      }
      o = queue.peek();
      if (o instanceof End) {
        return null; // stays queued: the end is reported again
      }
      if (o instanceof Failure f) {
        DaemonException mine = new DaemonException(f.e().kind(), f.e().errno(), f.e().getMessage());
        mine.initCause(f.e());
        throw mine;
      }
      queue.poll();
      Sized s = (Sized) o;
      outstanding -= s.bytes();
      unreturned += s.bytes();
      if (!ended && unreturned >= Wire.WINDOW / 4) {
        credit = unreturned;
        granted += credit;
        unreturned = 0;
      }
      o = s.item();
    }
    if (credit > 0) {
      conn.credit(stream, credit);
    }
    return (T) o;
  }

  /** Whether the stream's end (or failure) is the next thing to be taken. */
  synchronized boolean finished() {
    Object o = queue.peek();
    return o instanceof End || o instanceof Failure;
  }
}
