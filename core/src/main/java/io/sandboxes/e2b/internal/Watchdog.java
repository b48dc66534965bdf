package io.sandboxes.e2b.internal;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs an action once a deadline passes, unless closed first. Every watchdog of the JVM waits on
 * one shared timer thread, so arming one and closing it cost the guarded call no thread of its own
 * (a thread per watchdog measured about 0.15 ms on every exec); that thread ends once no watchdog
 * has been armed for a few seconds. Actions run on it and must be short (they close a stream).
 * {@link #close()} returns only once the action cannot run any more, or has finished running, so
 * nothing outlives the guarded call on any path.
 */
public final class Watchdog implements AutoCloseable {
  private static final ScheduledThreadPoolExecutor TIMER = timer();
  private static final ConcurrentMap<String, AtomicInteger> ARMED = new ConcurrentHashMap<>();

  private static final int ARMED_STATE = 0;
  private static final int RUNNING = 1;
  private static final int CLOSED = 2;

  private final AtomicInteger count;
  /** Armed, running its action (it stays so once the action is over), or closed before it ran. */
  private final AtomicInteger state = new AtomicInteger(ARMED_STATE);
  private final java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ScheduledFuture<?> firing;

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1,
        Thread.ofPlatform().name("sandboxes-timer").daemon(true).factory());
    t.setRemoveOnCancelPolicy(true); // a closed watchdog leaves nothing queued, so the thread can end
    t.setKeepAliveTime(5, TimeUnit.SECONDS);
    t.allowCoreThreadTimeOut(true);
    return t;
  }

  private Watchdog(AtomicInteger count, Duration after, Runnable action) {
    this.count = count;
    this.firing = TIMER.schedule(() -> {
      if (state.compareAndSet(ARMED_STATE, RUNNING)) {
        try {
          action.run();
        } finally {
          ran.countDown();
        }
      }
    }, Math.max(0, after.toNanos()), TimeUnit.NANOSECONDS);
  }

  /**
   * @param owner what the watchdog guards a call of (a sandbox id), for {@link #armed}
   * @param after how long until the action runs
   * @param action what runs then, on the timer's thread: something short, such as closing a stream
   */
  public static Watchdog arm(String owner, Duration after, Runnable action) {
    AtomicInteger count = ARMED.computeIfAbsent(owner, k -> new AtomicInteger());
    count.incrementAndGet();
    try {
      return new Watchdog(count, after, action);
    } catch (RuntimeException e) {
      count.decrementAndGet();
      throw e;
    }
  }

  /** @return how many watchdogs armed for {@code owner} are not closed yet */
  public static int armed(String owner) {
    AtomicInteger c = ARMED.get(owner);
    return c == null ? 0 : c.get();
  }

  /**
   * Disarms the watchdog; when its action is running, waits for it to finish (also when the
   * caller is interrupted: its flag is kept).
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      if (state.compareAndSet(ARMED_STATE, CLOSED)) {
        firing.cancel(false); // never to run: out of the timer's queue
      } else {
        Tasks.awaitUninterruptibly(ran); // running, or ran
      }
    } finally {
      count.decrementAndGet();
    }
  }
}
