package io.sandboxes.e2b;

import io.sandboxes.SandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Maps items through a blocking call on virtual threads with at most {@code limit} calls in
 * flight, keeping the items' order. After the first failure no new call starts; the calls already
 * in flight finish, and the first failure is thrown. The executor is scoped to the call, so no
 * thread outlives it.
 */
final class Bounded {
  private Bounded() {}

  static <T, R> List<R> map(List<T> items, int limit, Function<T, R> fn) {
    if (items.isEmpty()) {
      return List.of();
    }
    Semaphore permits = new Semaphore(limit);
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    List<Future<R>> futures = new ArrayList<>(items.size());
    try (ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-list-", 0).factory())) {
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
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while listing", e);
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    List<R> out = new ArrayList<>(futures.size());
    for (Future<R> f : futures) {
      try {
        out.add(f.get());
      } catch (ExecutionException e) {
        throw e.getCause() instanceof RuntimeException re ? re : new SandboxException(e.getCause().getMessage(), e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SandboxException("interrupted while listing", e);
      }
    }
    return out;
  }
}
