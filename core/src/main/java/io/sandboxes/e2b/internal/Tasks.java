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

  /** @return how many threads started for {@code owner} through {@link #start} are still running */
  public static int live(String owner) {
    AtomicInteger c = LIVE.get(owner);
    return c == null ? 0 : c.get();
  }
}
