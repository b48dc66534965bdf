package io.sandboxes.local.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The calls callers wait on (a create, a kill, a command, a file) under way and when the last one
 * began or ended, so that work nobody waits on (the warm pool's refills) can give way to them for
 * a moment: on a machine of few cores, a container started beside a sandbox's first commands slows
 * them several times over. A call counts as under way until its answer is complete, for at most
 * {@link #HELD}: a stream left open (a command in the background, a watch) does not hold
 * background work back.
 */
final class CallClock {
  /**
   * How long no call must have been under way before work nobody waits on goes ahead: longer than
   * the gap between one call's answer and the next call of a caller that makes them back to back
   * (on a loaded machine, tens of milliseconds), short next to the pause between a suite's tests.
   */
  static final Duration QUIET = Duration.ofMillis(150);
  /**
   * The longest a call under way counts as one: longer than a command takes on a loaded machine,
   * short next to a stream left open.
   */
  static final Duration HELD = Duration.ofSeconds(5);

  private record Call(long began) {}

  private final Set<Call> open = ConcurrentHashMap.newKeySet();
  private volatile long last = System.nanoTime() - Duration.ofDays(1).toNanos();

  /**
   * A call begins now.
   *
   * @return ends it; idempotent
   */
  Runnable begin() {
    Call call = new Call(System.nanoTime());
    open.add(call);
    last = call.began();
    return () -> {
      if (open.remove(call)) {
        last = System.nanoTime();
      }
    };
  }

  /**
   * @return how long until no call has been under way for {@code quiet} (a call under way that
   *     began within {@link #HELD} counts as ending now): 0 or less when that is so already
   */
  long quietInNanos(Duration quiet, long now) {
    return (underWay(now) == 0 ? last : now) + quiet.toNanos() - now;
  }

  /** @return how many calls are under way now (begun within {@link #HELD} and not ended) */
  int underWay() {
    return underWay(System.nanoTime());
  }

  private int underWay(long now) {
    // a call past HELD no longer counts: forgotten, so that one whose end never comes holds nothing
    open.removeIf(c -> now - c.began() >= HELD.toNanos());
    return open.size();
  }

  /** Waits until no call has been under way for {@code quiet}, for at most {@code most}. */
  void awaitQuiet(Duration quiet, Duration most) throws InterruptedException {
    long until = System.nanoTime() + most.toNanos();
    while (true) {
      long now = System.nanoTime();
      long left = Math.min(quietInNanos(quiet, now), until - now);
      if (left <= 0) {
        return;
      }
      Thread.sleep(Duration.ofNanos(Math.max(left, 1_000_000)));
    }
  }
}
