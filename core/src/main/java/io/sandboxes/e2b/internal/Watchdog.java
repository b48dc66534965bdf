package io.sandboxes.e2b.internal;

import java.time.Duration;

/**
 * Runs an action once a deadline passes, unless closed first. One virtual thread that is
 * interrupted on close, so nothing outlives the guarded call on any path.
 */
public final class Watchdog implements AutoCloseable {
  private final Thread thread;

  private Watchdog(Thread thread) {
    this.thread = thread;
  }

  public static Watchdog arm(String owner, Duration after, Runnable action) {
    Thread t = Tasks.start(owner, "sandboxes-watchdog-" + owner, () -> {
      try {
        Thread.sleep(after);
      } catch (InterruptedException e) {
        return;
      }
      action.run();
    });
    return new Watchdog(t);
  }

  /** Disarms the watchdog and waits for its thread to end (it ends at once when interrupted). */
  @Override
  public void close() {
    thread.interrupt();
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
