package io.sandboxes.e2b.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts the SDK's own background work on virtual threads and counts, per owner (a sandbox id),
 * what is still alive, so a test can prove nothing outlives the call that started it.
 */
public final class Tasks {
  private static final ConcurrentMap<String, AtomicInteger> LIVE = new ConcurrentHashMap<>();

  private Tasks() {}

  public static Thread start(String owner, String name, Runnable body) {
    AtomicInteger count = LIVE.computeIfAbsent(owner, k -> new AtomicInteger());
    count.incrementAndGet();
    return Thread.ofVirtual().name(name).start(() -> {
      try {
        body.run();
      } finally {
        count.decrementAndGet();
      }
    });
  }

  /**
   * Waits for a thread that was told to end, also when the caller is interrupted (a plain join
   * would then return at once, leaving the thread running); the caller's flag is set again after.
   * Only for threads that end promptly once told to.
   */
  public static void joinUninterruptibly(Thread t) {
    uninterruptibly(t::join);
  }

  /** Waits for a latch as {@link #joinUninterruptibly} waits for a thread: only for one that opens promptly. */
  public static void awaitUninterruptibly(java.util.concurrent.CountDownLatch latch) {
    uninterruptibly(latch::await);
  }

  /**
   * Waits for a latch as {@link #awaitUninterruptibly(java.util.concurrent.CountDownLatch)} does, for at most {@code atMost}.
   *
   * @return whether it opened in time
   */
  public static boolean awaitUninterruptibly(java.util.concurrent.CountDownLatch latch, java.time.Duration atMost) {
    long until = System.nanoTime() + atMost.toNanos();
    boolean[] opened = new boolean[1];
    uninterruptibly(() -> opened[0] = latch.await(Math.max(0, until - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS));
    return opened[0];
  }

  /** A wait that an interrupt cuts short. */
  @FunctionalInterface
  private interface Wait {
    void await() throws InterruptedException;
  }

  private static void uninterruptibly(Wait wait) {
    boolean interrupted = Thread.interrupted();
    while (true) {
      try {
        wait.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** @return how many threads started for {@code owner} through {@link #start} are still running */
  public static int live(String owner) {
    AtomicInteger c = LIVE.get(owner);
    return c == null ? 0 : c.get();
  }
}
