package io.sandboxes.local.internal.daemon;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What one daemon connection may make the host hold, whatever the daemon sends: everything the
 * host keeps of the daemon's answers is charged here first, so the memory one sandbox's daemon
 * costs the server is bounded by the sum of these pools plus the reader's buffers, however many
 * streams are open and however small or many the daemon's frames are.
 *
 * <ul>
 *   <li>Streams: at most {@link #MAX_STREAMS} open at once; each stream to the host starts with
 *       {@link Wire#INITIAL_CREDIT}, so together at most 8 MiB.
 *   <li>Windows: credit beyond the initial, up to {@link Wire#WINDOW} per stream, granted from a
 *       pool of {@link #WINDOW_POOL}; a stream opened while the pool is spent makes do with its
 *       initial credit and grows when others end.
 *   <li>Held: bytes a consumer took off a stream but keeps queued for its own readers (a
 *       process's attached clients, a watcher's events): {@link #HOLD_POOL}.
 *   <li>Calls: the items of answers being collected (entries, processes): {@link #CALL_POOL}.
 * </ul>
 *
 * Each charge is the item's bytes plus a fixed cost per item ({@link Wire#FRAME_COST} for
 * stream data, {@link #ITEM_COST} for call items), about what the host keeps per item besides
 * the bytes.
 */
public final class Budget {
  /** Most streams (calls included) open on one connection. */
  static final int MAX_STREAMS = 1024;
  /** Credit beyond the initial that all streams to the host may have together. */
  static final long WINDOW_POOL = 16L << 20;
  /** Bytes consumers may keep queued after taking them off their streams. */
  static final long HOLD_POOL = 8L << 20;
  /** Bytes of call answers being collected. */
  static final long CALL_POOL = 16L << 20;
  /** What one call item costs beyond its payload. */
  static final int ITEM_COST = 64;
  /** The most the host holds for one connection's answers and streams. */
  public static final long LIMIT = (long) MAX_STREAMS * Wire.INITIAL_CREDIT + WINDOW_POOL + HOLD_POOL + CALL_POOL;

  private long windows;
  private long held;
  private long calls;
  private int streams;
  private long peak;

  /** Counts a stream opened; false when {@link #MAX_STREAMS} are open. */
  synchronized boolean openStream() {
    if (streams >= MAX_STREAMS) {
      return false;
    }
    streams++;
    mark();
    return true;
  }

  synchronized void closeStream() {
    streams--;
  }

  /** Grants up to {@code want} more window; what it grants must be given back with {@link #releaseWindow}. */
  synchronized long grantWindow(long want) {
    long n = Math.max(0, Math.min(want, WINDOW_POOL - windows));
    windows += n;
    mark();
    return n;
  }

  synchronized void releaseWindow(long n) {
    windows -= n;
    notifyAll();
  }

  /** What holding {@code bytes} of a stream's data costs: the bytes and the per-frame cost. */
  public static long holdCost(int bytes) {
    return (long) bytes + Wire.FRAME_COST;
  }

  /** Charges a call item; false when the calls' pool is spent. */
  synchronized boolean chargeCall(long n) {
    if (calls + n > CALL_POOL) {
      return false;
    }
    calls += n;
    mark();
    return true;
  }

  synchronized void releaseCall(long n) {
    calls -= n;
  }

  /**
   * Charges bytes a consumer keeps, waiting up to {@code timeout} for room.
   *
   * @return false when there was no room in time
   */
  public synchronized boolean hold(long n, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    // one item larger than the whole pool still gets in once nothing else is held
    while (held + n > HOLD_POOL && held > 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    held += n;
    mark();
    return true;
  }

  /** Gives back what {@link #hold} charged. */
  public synchronized void release(long n) {
    held -= n;
    notifyAll();
  }

  /** What is charged now: open streams' initial credit, windows, held bytes and call items. */
  public synchronized long charged() {
    return (long) streams * Wire.INITIAL_CREDIT + windows + held + calls;
  }

  /** The most that was ever charged at once. */
  public synchronized long peak() {
    return peak;
  }

  private void mark() {
    peak = Math.max(peak, (long) streams * Wire.INITIAL_CREDIT + windows + held + calls);
  }
}
