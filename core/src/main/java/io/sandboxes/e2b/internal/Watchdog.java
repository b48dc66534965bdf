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

  /**
   * Disarms the watchdog and waits for its thread to end (it ends at once when interrupted), also
   * when the caller is itself interrupted: its flag is kept, and the timer is still gone on return.
   */
  @Override
  public void close() {
    thread.interrupt();
    joinUninterruptibly(thread);
  }

  /**
   * Waits for a thread that was told to end, even when the caller is interrupted (a plain join
   * would then return at once, leaving the thread running); the caller's flag is set again after.
   * Only for threads that end at once when interrupted, as the watchdog's does: it runs no caller code.
   */
  private static void joinUninterruptibly(Thread t) {
    boolean interrupted = Thread.interrupted();
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
