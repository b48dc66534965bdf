package io.sandboxes.local.internal.daemon;

import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The receiving half of a credit-controlled stream: what the reader thread delivers waits here
 * for the consumer, and credit goes back to the daemon only as the consumer takes it. The daemon
 * may never have more than the stream's window unconsumed, each frame costing its bytes plus
 * {@link Wire#FRAME_COST}, so this queue is bounded by the protocol itself; a daemon that
 * oversteps is a protocol violation.
 *
 * <p>The window starts at {@link Wire#INITIAL_CREDIT} and grows towards {@link Wire#WINDOW} with
 * what the connection's {@link Budget} grants; the growth goes back to the budget when the
 * stream is over for its consumer (its end taken, or {@link #close()}).
 */
final class Flow<T> {
  private final FrameChannel conn;
  private final ArrayDeque<Object> queue = new ArrayDeque<>();
  private long outstanding; // credit the daemon has used that the consumer has not taken back
  private long window = Wire.INITIAL_CREDIT; // credit the daemon may have outstanding
  private long grown; // the part of the window granted by the budget
  private long unreturned; // credit taken but not yet given back
  private boolean ended;
  private boolean released;
  int stream;

  /** The stream failed with {@code e}; null: it was closed on this side (the exception is made only if someone reads on). */
  private record Failure(@Nullable DaemonException e) {}

  private static final Failure CLOSED = new Failure(null);

  private record End() {}

  private record Sized(Object item, long cost) {}

  Flow(FrameChannel conn) {
    this.conn = conn;
  }

  /** Once the request is sent: asks the budget for a full window and gives the daemon what it got. */
  void open() {
    int more;
    synchronized (this) {
      more = grow();
    }
    if (more > 0) {
      conn.credit(stream, more);
    }
  }

  /** Called with the lock held: more window from the budget, up to {@link Wire#WINDOW}. */
  private int grow() {
    if (ended || released || window >= Wire.WINDOW) {
      return 0;
    }
    int more = (int) conn.budget().grantWindow(Wire.WINDOW - window);
    window += more;
    grown += more;
    return more;
  }

  /** Called on the reader thread; {@code bytes} is the frame's data, which costs {@link Wire#FRAME_COST} more. */
  synchronized void deliver(T item, int bytes) throws ProtocolException {
    long cost = (long) bytes + Wire.FRAME_COST;
    outstanding += cost;
    if (outstanding + unreturned > window) {
      throw new ProtocolException("a daemon sent " + (outstanding + unreturned) + " bytes of credit on a stream with "
          + window);
    }
    if (released) {
      outstanding -= cost; // the consumer has gone: nothing is kept
      return;
    }
    queue.add(new Sized(item, cost));
    notifyAll();
  }

  /** Queues a closing item the daemon pays no credit for (a process's exit); at most once per stream. */
  synchronized void deliverFree(T item) {
    if (!released) {
      queue.add(new Sized(item, 0));
      notifyAll();
    }
  }

  /** The stream ended normally after what was delivered. */
  synchronized void end() {
    if (!ended) {
      ended = true;
      queue.add(new End());
      notifyAll();
    }
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
   * The consumer is done: what waits is dropped and the window's growth goes back to the
   * budget. Later frames are counted against the credit and dropped.
   */
  synchronized void close() {
    ended = true;
    releaseNow();
    queue.clear();
    queue.add(CLOSED);
    notifyAll();
  }

  private void releaseNow() {
    if (!released) {
      released = true;
      conn.budget().releaseWindow(grown);
    }
  }

  /**
   * The next item, null at the end of the stream (or when the wait ran out: see
   * {@link #finished()}).
   */
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
        releaseNow();
        return null; // stays queued: the end is reported again
      }
      if (o instanceof Failure f) {
        releaseNow();
        DaemonException e = f.e();
        if (e == null) {
          throw new DaemonException(DaemonException.Kind.DISCONNECTED, "closed");
        }
        DaemonException mine = new DaemonException(e.kind(), e.errno(), e.getMessage());
        mine.initCause(e);
        throw mine;
      }
      queue.poll();
      Sized s = (Sized) o;
      outstanding -= s.cost();
      unreturned += s.cost();
      if (!ended && unreturned >= Math.max(window / 4, Wire.FRAME_COST)) {
        credit = (int) unreturned;
        unreturned = 0;
        credit += grow();
      }
      o = s.item();
    }
    if (credit > 0) {
      conn.credit(stream, credit);
    }
    @SuppressWarnings("unchecked")
    T item = (T) o;
    return item;
  }

  /**
   * The next item, failing with {@link DaemonException.Kind#TIMEOUT} when none comes within
   * {@code timeout}: for a consumer that expects the daemon to keep the data coming.
   */
  @Nullable T nextWithin(Duration timeout, String what) throws DaemonException, InterruptedIOException {
    T item = next(timeout);
    if (item == null && !finished()) {
      throw new DaemonException(DaemonException.Kind.TIMEOUT,
          "the sandbox daemon sent nothing for " + timeout.toSeconds() + " s while " + what);
    }
    return item;
  }

  /** Whether the stream's end (or failure) is the next thing to be taken. */
  synchronized boolean finished() {
    Object o = queue.peek();
    return o instanceof End || o instanceof Failure;
  }
}
