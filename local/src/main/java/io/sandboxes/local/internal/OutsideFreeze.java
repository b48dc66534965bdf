package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox whose container was frozen from outside this server ({@code docker pause} by someone
 * else; this server's own pause is no freeze from outside): its daemon cannot answer, so a call
 * into it would wait until someone unpauses it. Docker's pause and unpause events have the
 * registry look at the container and say here whether it is frozen from outside; while it is,
 * every call into the sandbox fails at once with {@link #error()}. A call already waiting for the
 * daemon is answered the same way when the freeze is seen, and one that has waited
 * {@link #STALL_CHECK} (the event may be late, or missed while Docker's event stream was down) has
 * the container looked at, and again every {@link #CHECK_PERIOD} while it waits on.
 *
 * <p>A call given up this way is left to finish in the background on its own thread: what it
 * yields then is handed to its {@code orphan} handler (which closes it; a process started by a
 * call the caller was told failed is killed).
 */
final class OutsideFreeze {
  /** How long a call waits for the daemon before the container is looked at. */
  static final Duration STALL_CHECK = Duration.ofSeconds(1);
  /** How often the container is looked at again while a call waits on. */
  static final Duration CHECK_PERIOD = Duration.ofSeconds(2);

  /** One call into the sandbox's daemon. */
  @FunctionalInterface
  interface DaemonCall<T> {
    T run(DaemonConnection connection) throws IOException, RpcError;
  }

  private final String sandboxId;
  private final Object lock = new Object();
  private volatile boolean frozen;
  /** Completes when the sandbox is seen frozen from outside; a fresh one after each thaw. */
  private volatile CompletableFuture<Void> seenFrozen = new CompletableFuture<>();
  private volatile BooleanSupplier look = () -> false;

  OutsideFreeze(String sandboxId) {
    this.sandboxId = sandboxId;
  }

  /** @return whether the container is frozen from outside, as last seen */
  boolean frozen() {
    return frozen;
  }

  /**
   * Records what was seen.
   *
   * @return whether that changed the record
   */
  boolean set(boolean frozenNow) {
    synchronized (lock) {
      if (frozenNow == frozen) {
        return false;
      }
      frozen = frozenNow;
      if (frozenNow) {
        seenFrozen.complete(null);
      } else {
        seenFrozen = new CompletableFuture<>();
      }
      return true;
    }
  }

  /**
   * Sets how the container is looked at when a call stalls: the registry's look, which records
   * what it sees here and answers whether the container is frozen from outside.
   */
  void lookWith(BooleanSupplier look) {
    this.look = look;
  }

  /** The error every call into a sandbox frozen from outside gets. */
  RpcError error() {
    return new RpcError("unavailable", "sandbox " + sandboxId + " is frozen from outside this server (its container was paused"
        + " with docker pause, not by this server): calls into it fail until it is unpaused (docker unpause)");
  }

  /** @throws RpcError {@link #error()} when the sandbox is frozen from outside */
  void check() throws RpcError {
    if (frozen) {
      throw error();
    }
  }

  /**
   * Runs a call into the daemon on its own thread and waits for it, unless the sandbox is (or is
   * found) frozen from outside meanwhile.
   *
   * @param orphan gets what the call yields if it finishes after it was given up
   * @throws RpcError {@link #error()} when frozen from outside, or the call's own
   */
  <T> T call(DaemonConnection connection, DaemonCall<T> call, @Nullable Consumer<T> orphan) throws RpcError, IOException {
    check();
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread.ofVirtual().name("sandboxes-call-" + sandboxId).start(() -> {
      try {
        result.complete(call.run(connection));
      } catch (Throwable t) {
        result.completeExceptionally(t);
      }
    });
    long wait = STALL_CHECK.toNanos();
    while (true) {
      CompletableFuture<Void> frozenSignal = seenFrozen;
      try {
        CompletableFuture.anyOf(result, frozenSignal).get(wait, TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException e) {
        // looked at below
      } catch (InterruptedException e) {
        giveUp(result, orphan);
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while waiting for the daemon of sandbox " + sandboxId);
      }
      if (result.isDone()) {
        return outcome(result);
      }
      if (frozenSignal.isDone() || frozen || look.getAsBoolean()) {
        giveUp(result, orphan);
        throw error();
      }
      wait = CHECK_PERIOD.toNanos();
    }
  }

  private static <T> void giveUp(CompletableFuture<T> result, @Nullable Consumer<T> orphan) {
    if (orphan != null) {
      result.thenAccept(orphan);
    }
  }

  private static <T> T outcome(CompletableFuture<T> result) throws RpcError, IOException {
    try {
      return result.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException io) {
        throw io;
      }
      if (c instanceof RpcError r) {
        throw r;
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IOException(c);
    }
  }
}
