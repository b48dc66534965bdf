package io.sandboxes.local;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's requests as its idle exit sees them: how many are being answered, and when the
 * last one came or ended. A request being answered is activity however long it takes (a create
 * on a loaded machine, a stream), so an idle exit never cuts one off.
 */
final class RequestActivity {
  private final AtomicInteger answering = new AtomicInteger();
  private volatile long last = System.nanoTime();

  /** A request came in; {@link #ended()} follows once it is answered, however it ends. */
  void arrived() {
    answering.incrementAndGet();
    last = System.nanoTime();
  }

  void ended() {
    last = System.nanoTime();
    answering.decrementAndGet();
  }

  /** Whether no request is being answered and none came or ended for at least {@code quiet}. */
  boolean quietFor(Duration quiet) {
    return answering.get() == 0 && System.nanoTime() - last >= quiet.toNanos();
  }
}
