package io.sandboxes.local.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pre-started sandbox containers per template, waiting running (not frozen) to be claimed by a
 * create. A member has no identity: no sandbox id, token, metadata, env or deadline in its
 * container config. The id it will take is drawn when it is made (it is its hostname and container
 * name, so a claimed sandbox looks like a cold one from inside), but it becomes a sandbox only when
 * a create claims it and the registry records its state file. Unclaimed members have no state file,
 * so a restarted server removes them.
 *
 * <p>Each member is taken out of its queue by one atomic poll, so no member is handed out twice.
 * One filler per template refills in the background, one member at a time, after every claim.
 * Refills give way to creates: at most one member is being started at a time across all
 * templates, and none is started while a create is under way or within {@link #QUIET} of the last
 * one's beginning (a burst that emptied the pool is not slowed by refills competing with its cold
 * starts for Docker; the rest of a burst may still be on its way when its first create claims a
 * member), unless creates have kept it waiting for {@link #MAX_YIELD}, so that steady traffic
 * cannot starve the pool.
 */
final class WarmPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WarmPool.class);
  /** Marks a pool member's container; with no sandbox-id label it is a member nobody claimed yet, or one recorded in a state file. */
  static final String LABEL_POOL = "io.sandboxes.pool-member";
  /** The container name prefix of a member not yet claimed (a claim renames it to {@code sandboxes-<id>}). */
  static final String NAME_PREFIX = "sandboxes-pool-";
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  /** The longest a refill waits for creates to finish before it starts a member anyway. */
  static final Duration MAX_YIELD = Duration.ofSeconds(10);
  /** How long after a create began a refill still waits, for the rest of a burst to arrive. */
  static final Duration QUIET = Duration.ofMillis(150);

  /** A started, firewalled (deny-all), daemon-connected container nobody holds yet. */
  record Member(String id, String instanceId, String templateId, String image, SandboxDaemon daemon,
      @Nullable String networkAddress) {}

  /** Makes and discards members; the registry's side. */
  interface Maker {
    /** Starts a member of the template, connected and firewalled, or throws. */
    Member start(String templateId) throws Exception;

    /** Removes a member's container, daemon folder and gateway entry. */
    void discard(Member m);
  }

  private final Map<String, Integer> sizes;
  private final Maker maker;
  private final ConcurrentMap<String, ConcurrentLinkedDeque<Member>> ready = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, AtomicBoolean> filling = new ConcurrentHashMap<>();
  private final Set<Thread> fillers = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  /** One member started at a time, whatever its template. */
  private final java.util.concurrent.Semaphore starting = new java.util.concurrent.Semaphore(1);
  private final java.util.concurrent.locks.ReentrantLock coldLock = new java.util.concurrent.locks.ReentrantLock();
  private final java.util.concurrent.locks.Condition noCold = coldLock.newCondition();
  private int coldCreates;
  private long lastCreateBegan = System.nanoTime() - QUIET.toNanos();

  /** @param sizes template id to how many members it keeps ready; 0 or absent: none */
  WarmPool(Map<String, Integer> sizes, Maker maker) {
    this.sizes = Map.copyOf(sizes);
    this.maker = maker;
    this.sizes.forEach((t, n) -> {
      if (n > 0) {
        refill(t);
      }
    });
  }

  int size(String templateId) {
    return sizes.getOrDefault(templateId, 0);
  }

  /** @return a member of the template, never one handed out before; null when none is ready */
  @Nullable Member claim(String templateId) {
    ConcurrentLinkedDeque<Member> q = ready.get(templateId);
    Member m = q == null ? null : q.pollFirst();
    if (size(templateId) > 0) {
      refill(templateId);
    }
    return m;
  }

  /**
   * A create begins (it may claim a member or start cold): refills wait until it, and every other
   * one, has ended.
   *
   * @return ends it; idempotent
   */
  Runnable createBegins() {
    coldLock.lock();
    try {
      coldCreates++;
      lastCreateBegan = System.nanoTime();
    } finally {
      coldLock.unlock();
    }
    AtomicBoolean ended = new AtomicBoolean();
    return () -> {
      if (ended.compareAndSet(false, true)) {
        coldLock.lock();
        try {
          if (--coldCreates == 0) {
            noCold.signalAll();
          }
        } finally {
          coldLock.unlock();
        }
      }
    };
  }

  /** Waits while creates are under way or one began within {@link #QUIET}, for at most {@link #MAX_YIELD}. */
  private void yieldToCreates() throws InterruptedException {
    long until = System.nanoTime() + MAX_YIELD.toNanos();
    coldLock.lock();
    try {
      while (!closed) {
        long now = System.nanoTime();
        long quietIn = lastCreateBegan + QUIET.toNanos() - now;
        if ((coldCreates == 0 && quietIn <= 0) || until - now <= 0) {
          return;
        }
        noCold.awaitNanos(Math.min(until - now, coldCreates > 0 ? Long.MAX_VALUE : quietIn));
      }
    } finally {
      coldLock.unlock();
    }
  }

  /** A container died or was removed: a ready member it held is dropped and replaced. */
  void containerGone(String containerId) {
    for (Map.Entry<String, ConcurrentLinkedDeque<Member>> e : ready.entrySet()) {
      for (Member m : e.getValue()) {
        if (m.instanceId().equals(containerId) && e.getValue().remove(m)) {
          LOG.warn("warm pool member {} of {} ended from outside; replacing it", m.id(), m.templateId());
          maker.discard(m);
          refill(e.getKey());
        }
      }
    }
  }

  /** Template id to (ready, target), for status. */
  Map<String, int[]> status() {
    Map<String, int[]> out = new LinkedHashMap<>();
    sizes.forEach((t, n) -> {
      ConcurrentLinkedDeque<Member> q = ready.get(t);
      out.put(t, new int[] {q == null ? 0 : q.size(), n});
    });
    return out;
  }

  private void refill(String templateId) {
    AtomicBoolean flag = filling.computeIfAbsent(templateId, t -> new AtomicBoolean());
    if (closed || !flag.compareAndSet(false, true)) {
      return;
    }
    Thread t = Thread.ofVirtual().name("sandboxes-pool-" + templateId).unstarted(() -> fill(templateId, flag));
    fillers.add(t);
    t.start();
  }

  private void fill(String templateId, AtomicBoolean flag) {
    ConcurrentLinkedDeque<Member> q = ready.computeIfAbsent(templateId, k -> new ConcurrentLinkedDeque<>());
    Duration backoff = Duration.ofMillis(500);
    try {
      while (!closed && q.size() < size(templateId)) {
        try {
          yieldToCreates();
          starting.acquire();
        } catch (InterruptedException e) {
          return;
        }
        Member m = null;
        Exception failed = null;
        try {
          if (!closed) {
            m = maker.start(templateId);
          }
        } catch (Exception e) {
          failed = e;
        } finally {
          starting.release();
        }
        if (failed != null) {
          if (closed) {
            return;
          }
          LOG.warn("starting a warm pool member of {} failed (next try in {} ms): {}", templateId, backoff.toMillis(),
              failed.toString());
          long until = System.nanoTime() + backoff.toNanos();
          while (!closed && System.nanoTime() - until < 0) {
            try {
              Thread.sleep(100);
            } catch (InterruptedException ie) {
              return;
            }
          }
          backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
          continue;
        }
        if (m == null) {
          return; // closed before it started
        }
        q.addLast(m);
        if (closed && q.remove(m)) {
          maker.discard(m); // close() may have drained the queue before this member arrived
          return;
        }
        backoff = Duration.ofMillis(500);
      }
    } finally {
      flag.set(false);
      fillers.remove(Thread.currentThread());
      if (!closed && q.size() < size(templateId)) {
        refill(templateId); // a claim came in between the last check and the flag's release
      }
    }
  }

  /** Stops refilling and removes every member nobody claimed. */
  @Override
  public void close() {
    closed = true;
    coldLock.lock();
    try {
      noCold.signalAll(); // a filler waiting on cold creates stops now
    } finally {
      coldLock.unlock();
    }
    for (Thread t : List.copyOf(fillers)) {
      try {
        t.join(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    for (ConcurrentLinkedDeque<Member> q : ready.values()) {
      Member m;
      while ((m = q.pollFirst()) != null) {
        maker.discard(m);
      }
    }
  }
}
