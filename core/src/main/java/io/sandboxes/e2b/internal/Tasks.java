package io.sandboxes.e2b.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts the SDK's own background work on virtual threads and counts what is still alive, so a
 * test can prove nothing outlives the call that started it.
 */
public final class Tasks {
  private static final AtomicInteger LIVE = new AtomicInteger();

  private Tasks() {}

  public static Thread start(String name, Runnable body) {
    LIVE.incrementAndGet();
    return Thread.ofVirtual().name(name).start(() -> {
      try {
        body.run();
      } finally {
        LIVE.decrementAndGet();
      }
    });
  }

  /** @return how many threads started through {@link #start} are still running */
  public static int live() {
    return LIVE.get();
  }
}
