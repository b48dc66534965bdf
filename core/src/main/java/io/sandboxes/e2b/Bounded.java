package io.sandboxes.e2b;

import io.sandboxes.SandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Maps items through a blocking call on virtual threads with at most {@code limit} calls in
 * flight, keeping the items' order. After the first failure no new call starts; the calls already
 * in flight finish, and the first failure is thrown.
 *
 * <p>An interrupt of the calling thread ends the call at once: no new call starts, the calls in
 * flight are cancelled (their threads are interrupted, and the JDK's HTTP client aborts a request
 * whose sending thread is interrupted, closing its connection), and a {@link SandboxException} is
 * thrown with the interrupt flag set again. The threads of cancelled calls are given
 * {@link #CANCEL_GRACE_MILLIS} (50 ms) to end before the call returns; any still running then has
 * been interrupted and ends on its own.
 */
final class Bounded {
  /** How long an interrupted map waits for its cancelled calls' threads before it returns. */
  static final long CANCEL_GRACE_MILLIS = 50;

  private Bounded() {}

  static <T, R> List<R> map(List<T> items, int limit, Function<T, R> fn) {
    if (items.isEmpty()) {
      return List.of();
    }
    Semaphore permits = new Semaphore(limit);
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    List<Future<R>> futures = new ArrayList<>(items.size());
    ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-list-", 0).factory());
    try {
      for (T item : items) {
        permits.acquire();
        if (failure.get() != null) {
          permits.release();
          break;
        }
        futures.add(executor.submit(() -> {
          try {
            return fn.apply(item);
          } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
            throw e;
          } finally {
            permits.release();
          }
        }));
      }
      executor.shutdown();
      for (Future<R> f : futures) {
        try {
          f.get();
        } catch (ExecutionException recordedAbove) {
          // the first failure is in `failure`; the others wait their turn
        }
      }
    } catch (InterruptedException e) {
      int cancelled = cancel(futures, executor);
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while listing; " + cancelled + " call(s) in flight were cancelled", e);
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    List<R> out = new ArrayList<>(futures.size());
    for (Future<R> f : futures) {
      out.add(f.resultNow());
    }
    return out;
  }

  /** Cancels what is in flight and waits briefly for its threads; the flag is left clear. */
  private static int cancel(List<? extends Future<?>> futures, ExecutorService executor) {
    int cancelled = 0;
    for (Future<?> f : futures) {
      if (f.cancel(true)) {
        cancelled++;
      }
    }
    executor.shutdownNow();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CANCEL_GRACE_MILLIS);
    while (true) {
      long left = deadline - System.nanoTime();
      try {
        if (left <= 0 || executor.awaitTermination(left, TimeUnit.NANOSECONDS)) {
          return cancelled;
        }
      } catch (InterruptedException again) {
        // interrupted once more while waiting: the caller wants out, and the flag is set after
        return cancelled;
      }
    }
  }
}
