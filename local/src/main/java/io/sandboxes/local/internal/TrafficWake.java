package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Traffic to a paused sandbox (a call to its envd, a request to one of its ports, a connection to
 * a preview listener) resumes it when its lifecycle says {@code autoResume} and its pause kept
 * its memory, as E2B's proxy does: E2B resumes on traffic only a memory snapshot, whose resumed
 * processes take the request; a filesystem-only pause needs an explicit connect.
 *
 * <p>One resume per sandbox at a time, whoever asks: the first request resumes it (for the
 * timeout it was created with, as a resume by call does) and every request arriving meanwhile
 * waits for that one's outcome instead of queueing on the sandbox's transition lock. At most
 * {@link #MAX_WAITING} requests wait per sandbox, each at most {@link #WAIT}; a request beyond
 * that is told at once, so a flood of requests to a paused sandbox holds a bounded share of the
 * server.
 */
public final class TrafficWake {
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  /** The most requests waiting at once for one sandbox's resume. */
  public static final int MAX_WAITING = 64;
  /** How long a request waits for a resume another request started. */
  static final Duration WAIT = Duration.ofSeconds(60);

  /** What became of a request's attempt to wake its sandbox. */
  public enum Outcome {
    /** Running (it was, or it is resumed now): the request goes on. */
    AWAKE,
    /** Paused, and traffic does not resume it (no {@code autoResume}, or only its filesystem is kept). */
    ASLEEP,
    /** The resume failed (or it is gone): the request cannot go on. */
    FAILED,
    /** Being resumed with {@link #MAX_WAITING} requests waiting already: this one is refused now. */
    BUSY
  }

  private final Registry registry;
  private final ConcurrentMap<String, Waking> waking = new ConcurrentHashMap<>();

  private static final class Waking {
    final CompletableFuture<Boolean> done = new CompletableFuture<>();
    final AtomicInteger waiting = new AtomicInteger();
  }

  TrafficWake(Registry registry) {
    this.registry = registry;
  }

  /** @return whether traffic resumes this sandbox while it is paused as it is now */
  public static boolean resumesOnTraffic(LocalSandbox s) {
    return s.lifecycle().autoResume() && s.memoryKept();
  }

  /** Wakes a paused sandbox for a request, or says why the request cannot reach it. */
  public Outcome wake(LocalSandbox s) {
    if (!s.paused()) {
      return Outcome.AWAKE;
    }
    if (!resumesOnTraffic(s)) {
      return Outcome.ASLEEP;
    }
    Waking mine = new Waking();
    Waking current = waking.putIfAbsent(s.id(), mine);
    if (current == null) {
      boolean resumed = false;
      try {
        // a request that lost the race with an earlier wake finds it running: the resume then
        // only extends its deadline, as a resume by call of a running sandbox does
        registry.resume(s, Duration.ofSeconds(s.lifecycle().timeoutSeconds()));
        resumed = true;
      } catch (RpcError | RuntimeException e) {
        LOG.warn("automatic resume of sandbox {} failed: {}", s.id(), e.getMessage());
      } finally {
        mine.done.complete(resumed);
        waking.remove(s.id(), mine);
      }
      return resumed ? Outcome.AWAKE : Outcome.FAILED;
    }
    if (current.waiting.incrementAndGet() > MAX_WAITING) {
      current.waiting.decrementAndGet();
      return Outcome.BUSY;
    }
    try {
      return current.done.get(WAIT.toMillis(), TimeUnit.MILLISECONDS) ? Outcome.AWAKE : Outcome.FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Outcome.FAILED;
    } catch (ExecutionException | TimeoutException e) {
      return Outcome.FAILED;
    } finally {
      current.waiting.decrementAndGet();
    }
  }

  /** @return how many requests wait for a resume of this sandbox now (for tests and metrics) */
  public int waiting(String sandboxId) {
    Waking w = waking.get(sandboxId);
    return w == null ? 0 : w.waiting.get();
  }
}
