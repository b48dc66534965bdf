package io.sandboxes.local.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
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
 *
 * <p><b>Size.</b> Each template's configured size is its floor. Its target rises with demand: the
 * number of creates of the template that began within the last {@link #DEMAND_WINDOW} (a burst of
 * ten asks for ten, back-to-back cycles for as many as fit in the window), never above the
 * maximum, and it stays there while creates keep coming. Once none has come for
 * {@link #SURPLUS_AFTER}, the target falls back to the floor and the members above it are removed.
 *
 * <p><b>Refill.</b> After every claim, up to {@link #PARALLEL_STARTS} members are started at once
 * across all templates, each as its own background task, until ready and starting members reach
 * the target. Refills give way to creates: none is started while a create is under way, nor,
 * when the template's pool is empty (a create would start cold), within {@link #QUIET} of the last
 * one's beginning (a burst that emptied the pool is not slowed by refills competing with its cold
 * starts for Docker; the rest of a burst may still be on its way when its first create claims a
 * member), unless creates have kept it waiting for {@link #MAX_YIELD}, so that steady traffic
 * cannot starve the pool. Between back-to-back creates that find members ready, refills go on;
 * a refill that has seen a burst ({@link #BURST_CREATES} creates begun together) gives way to its
 * first commands for up to {@link #EMPTY_CALLS_WAIT}, whatever the pool still holds.
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
  /** How long after a create began a refill of an empty pool still waits, for the rest of a burst to arrive. */
  static final Duration QUIET = Duration.ofMillis(150);
  /**
   * The longest after the claim that emptied it an empty pool's refill waits for the callers'
   * calls to pause: a burst's first commands take well under a second; a suite whose calls never
   * pause must not leave the pool empty for longer.
   */
  static final Duration EMPTY_CALLS_WAIT = Duration.ofSeconds(1);
  /**
   * How many creates beginning within {@link #QUIET}, while some other call of the callers' is
   * under way, make a burst (a fan-out, a parallel suite's start; not one caller's back-to-back
   * creates, however fast, whose calls go one at a time): a refill that has seen one gives way
   * to its first commands even while the pool still holds a few members, as it does once the
   * pool is empty.
   */
  static final int BURST_CREATES = 8;
  /** How far back creates count as demand. */
  static final Duration DEMAND_WINDOW = Duration.ofSeconds(10);
  /** How long without a create before a pool falls back to its floor and its surplus members are removed. */
  static final Duration SURPLUS_AFTER = Duration.ofSeconds(60);
  /**
   * What an idle member is counted as costing the machine, in bytes: its container (its {@code sleep}
   * and idle daemon, about 0.65 MiB), the engine's {@code containerd-shim} for it (about 6.5 MiB)
   * and the server's share (under 1 MB).
   */
  static final long MEMBER_COST = 8L << 20;
  /** The share of the engine's memory idle members may hold at most, by default: one part in this many. */
  static final int MEMORY_SHARE = 64;
  /** The default maximum never goes below this (where the engine's memory is small or unknown) nor above {@link #MOST}. */
  static final int LEAST_DEFAULT_MAX = 16;
  /** The most members a template's pool may hold. */
  static final int MOST = 64;
  /** How many members are started at once, across templates: half the cores, at least 2 and at most 4. */
  static final int PARALLEL_STARTS = Math.clamp(Runtime.getRuntime().availableProcessors() / 2, 2, 4);

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

  /** One template's pool. */
  private final class Tier {
    final String templateId;
    final int floor;
    final ConcurrentLinkedDeque<Member> ready = new ConcurrentLinkedDeque<>();
    /** When recent creates began (nanoTime), oldest first; guarded by this. */
    final ArrayDeque<Long> creates = new ArrayDeque<>();
    /** Members being started now; guarded by this. */
    int starting;
    /** How many members it aims to hold: floor to max; guarded by this. */
    int target;
    /** When a create last began; guarded by this. */
    long lastCreate = System.nanoTime();
    /** When a claim last took its last ready member (nanoTime). */
    volatile long emptiedAt = System.nanoTime() - Duration.ofDays(1).toNanos();
    /** The wait after a failed start; guarded by this. */
    Duration backoff = Duration.ofMillis(500);

    Tier(String templateId, int floor) {
      this.templateId = templateId;
      this.floor = floor;
      this.target = floor;
    }

    synchronized void demand(long now) {
      creates.addLast(now);
      while (now - creates.peekFirst() > demandWindowNanos) {
        creates.pollFirst();
      }
      lastCreate = now;
      target = Math.max(target, Math.min(Math.max(max, floor), creates.size()));
    }

    synchronized int target() {
      return target;
    }

    /** After a quiet period, the target falls to the floor: @return how many ready members are surplus */
    synchronized int decay(long now) {
      if (target > floor && now - lastCreate >= surplusAfterNanos) {
        LOG.debug("warm pool of {}: no create for {} ms, back from {} to {}", templateId, (now - lastCreate) / 1_000_000, target,
            floor);
        target = floor;
        creates.clear();
      }
      return ready.size() - target;
    }
  }

  private final Map<String, Tier> tiers;
  private final int max;
  private final Maker maker;
  private final Set<Thread> fillers = ConcurrentHashMap.newKeySet();
  private final Thread keeper;
  /** Wakes the keeper at close (an interrupt could cut short a removal it is making). */
  private final java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);
  private volatile boolean closed;
  private volatile long demandWindowNanos = DEMAND_WINDOW.toNanos();
  private volatile long surplusAfterNanos = SURPLUS_AFTER.toNanos();
  /** {@link #PARALLEL_STARTS} members started at a time, whatever their template. */
  private final Semaphore startSlots = new Semaphore(PARALLEL_STARTS);
  private final AtomicInteger startsNow = new AtomicInteger();
  private final AtomicInteger peakStarts = new AtomicInteger();
  private final ReentrantLock coldLock = new ReentrantLock();
  private final Condition noCold = coldLock.newCondition();
  private int coldCreates;
  private long lastCreateBegan = System.nanoTime() - QUIET.toNanos();
  /** When the last {@link #BURST_CREATES} creates began (nanoTime), a ring; the oldest at {@link #nextCreate}. */
  private final long[] recentCreates = new long[BURST_CREATES];
  private int nextCreate;
  /** When a create last began as part of a burst (nanoTime). */
  private long lastBurst;
  /** The callers' calls under way: refills of a well-stocked pool give way to them. */
  private final CallClock calls;

  /**
   * @param sizes template id to the fewest members it keeps ready; 0 or absent: no pool
   * @param max the most members a template's pool grows to with demand (a larger size wins)
   */
  WarmPool(Map<String, Integer> sizes, int max, CallClock calls, Maker maker) {
    this.max = max;
    this.calls = calls;
    this.maker = maker;
    long longAgo = System.nanoTime() - Duration.ofDays(1).toNanos();
    java.util.Arrays.fill(recentCreates, longAgo);
    this.lastBurst = longAgo;
    Map<String, Tier> t = new LinkedHashMap<>();
    sizes.forEach((id, n) -> {
      if (n > 0) {
        t.put(id, new Tier(id, n));
      }
    });
    this.tiers = Map.copyOf(t);
    this.keeper = Thread.ofVirtual().name("sandboxes-pool-keeper").start(this::keep);
    tiers.values().forEach(this::refill);
  }

  /**
   * How far a pool grows with demand unless told otherwise: as many members as fit in one
   * {@link #MEMORY_SHARE}th of the engine's memory at {@link #MEMBER_COST} each, within
   * {@link #LEAST_DEFAULT_MAX} and {@link #MOST} (8 GiB: 16; 16 GiB: 32; 32 GiB or more: 64). A
   * run of back-to-back creates longer than the pool starts the rest cold, since a cold start
   * takes far longer than a warm cycle; the memory is held only while demand lasts.
   *
   * @param engineMemory the engine's memory in bytes; empty when it could not be read ({@link #LEAST_DEFAULT_MAX})
   */
  static int defaultMax(java.util.OptionalLong engineMemory) {
    if (engineMemory.isEmpty()) {
      return LEAST_DEFAULT_MAX;
    }
    return (int) Math.clamp(engineMemory.getAsLong() / MEMORY_SHARE / MEMBER_COST, LEAST_DEFAULT_MAX, MOST);
  }

  /** For tests: shorter periods of demand and of quiet before the surplus goes. */
  void periodsForTesting(Duration demandWindow, Duration surplusAfter) {
    this.demandWindowNanos = demandWindow.toNanos();
    this.surplusAfterNanos = surplusAfter.toNanos();
  }

  /** @return the most members that were being started at the same moment so far */
  int peakParallelStarts() {
    return peakStarts.get();
  }

  /** @return a member of the template, never one handed out before; null when none is ready */
  @Nullable Member claim(String templateId) {
    Tier tier = tiers.get(templateId);
    if (tier == null) {
      return null;
    }
    Member m = tier.ready.pollFirst();
    long now = System.nanoTime();
    if (m != null && tier.ready.isEmpty()) {
      tier.emptiedAt = now;
    }
    tier.demand(now);
    refill(tier);
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
      long now = System.nanoTime();
      lastCreateBegan = now;
      recentCreates[nextCreate] = now;
      nextCreate = (nextCreate + 1) % BURST_CREATES;
      // this create and the BURST_CREATES - 1 before it (the oldest now at nextCreate) began
      // within QUIET, and another call is under way beside them (this create's own is not yet)
      if (now - recentCreates[nextCreate] < QUIET.toNanos() && calls.underWay() > 0) {
        lastBurst = now;
      }
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

  /**
   * How long an empty pool's refill still waits: until {@link #QUIET} after the last create
   * began, for the rest of a burst to arrive, and, for at most {@link #EMPTY_CALLS_WAIT} after
   * the claim that emptied it, until the callers' calls pause: a burst that empties the pool runs
   * its sandboxes' first commands next, and members started beside them on the same cores slow
   * them (docs/local-runtime.md has the figures). Later creates do not move that second on, so
   * a suite that keeps creating and calling gets its pool back as before.
   */
  private long emptyQuietIn(Tier tier, long now) {
    long afterCreate = lastCreateBegan + QUIET.toNanos() - now;
    long callsCap = tier.emptiedAt + EMPTY_CALLS_WAIT.toNanos() - now;
    return Math.max(afterCreate, Math.min(calls.quietInNanos(CallClock.QUIET, now), callsCap));
  }

  /**
   * Waits while creates are under way or, when the template's pool is empty, one began within
   * {@link #QUIET} or its callers' calls go on (within {@link #EMPTY_CALLS_WAIT} of its
   * emptying), or, while it is {@linkplain #wellStocked well stocked}, a caller's call is under
   * way or ended within {@link CallClock#QUIET} (a sandbox just claimed runs its first commands
   * then, and a member's start on the same cores would slow them several times over), or, once
   * it has seen a burst of creates ({@link #BURST_CREATES}), its callers' calls go on (for at
   * most {@link #EMPTY_CALLS_WAIT} of this wait); for at most {@link #MAX_YIELD}.
   */
  private void yieldToCreates(Tier tier) throws InterruptedException {
    long began = System.nanoTime();
    long until = began + MAX_YIELD.toNanos();
    boolean burst = false;
    coldLock.lock();
    try {
      while (!closed) {
        long now = System.nanoTime();
        int ready = tier.ready.size();
        // a burst's creates were under way within QUIET: its first commands come next, and this
        // refill waits for them (as an empty pool's does) once it has seen it
        burst |= now - lastBurst < QUIET.toNanos();
        long quietIn = ready == 0 ? emptyQuietIn(tier, now)
            : wellStocked(ready, tier.target()) ? calls.quietInNanos(CallClock.QUIET, now)
            : burst ? Math.min(calls.quietInNanos(CallClock.QUIET, now), began + EMPTY_CALLS_WAIT.toNanos() - now) : 0;
        if ((coldCreates == 0 && quietIn <= 0) || until - now <= 0) {
          return;
        }
        // a member another task adds makes the wait moot: look again at least every QUIET
        noCold.awaitNanos(Math.min(until - now, coldCreates > 0 ? QUIET.toNanos() : Math.min(quietIn, QUIET.toNanos())));
      }
    } finally {
      coldLock.unlock();
    }
  }

  /**
   * Whether a pool holding {@code ready} members of its {@code target} can put its refill off
   * until the callers' calls pause: it holds more than a quarter of its target, or it still holds
   * one and lacks only one (a server's default pool of two after a single claim: its one member's
   * start would otherwise run beside the claimed sandbox's first commands every time).
   */
  static boolean wellStocked(int ready, int target) {
    return ready > Math.max(1, target / 4) || (ready >= 1 && ready >= target - 1);
  }

  /** A container died or was removed: a ready member it held is dropped and replaced. */
  void containerGone(String containerId) {
    for (Tier tier : tiers.values()) {
      for (Member m : tier.ready) {
        if (m.instanceId().equals(containerId) && tier.ready.remove(m)) {
          LOG.warn("warm pool member {} of {} ended from outside; replacing it", m.id(), m.templateId());
          maker.discard(m);
          refill(tier);
        }
      }
    }
  }

  /** Template id to (ready, target), for status. */
  Map<String, int[]> status() {
    Map<String, int[]> out = new LinkedHashMap<>();
    tiers.forEach((t, tier) -> out.put(t, new int[] {tier.ready.size(), tier.target()}));
    return out;
  }

  /** Starts tasks, each starting one member, until ready and starting reach the target (at most PARALLEL_STARTS at once). */
  private void refill(Tier tier) {
    synchronized (tier) {
      while (!closed && tier.ready.size() + tier.starting < tier.target && tier.starting < PARALLEL_STARTS) {
        tier.starting++;
        Thread t = Thread.ofVirtual().name("sandboxes-pool-" + tier.templateId).unstarted(() -> fillOne(tier));
        fillers.add(t);
        t.start();
      }
    }
  }

  /** Starts one member (after giving way to creates) and puts it in the pool; on failure waits its back-off. */
  private void fillOne(Tier tier) {
    try {
      try {
        yieldToCreates(tier);
        startSlots.acquire();
      } catch (InterruptedException e) {
        return;
      }
      Member m = null;
      Exception failed = null;
      try {
        peakStarts.accumulateAndGet(startsNow.incrementAndGet(), Math::max);
        if (!closed) {
          m = maker.start(tier.templateId);
        }
      } catch (Exception e) {
        failed = e;
      } finally {
        startsNow.decrementAndGet();
        startSlots.release();
      }
      if (failed != null) {
        backOff(tier, failed);
        return;
      }
      if (m == null) {
        return; // closed before it started
      }
      boolean surplus;
      synchronized (tier) {
        surplus = tier.ready.size() >= tier.target; // demand fell while it started
        if (!surplus) {
          tier.ready.addLast(m);
        }
        tier.backoff = Duration.ofMillis(500);
      }
      if (surplus || (closed && tier.ready.remove(m))) {
        maker.discard(m); // close() may have drained the queue before this member arrived
      }
    } finally {
      synchronized (tier) {
        tier.starting--;
      }
      fillers.remove(Thread.currentThread());
      refill(tier); // the next member, or one a claim asked for meanwhile
    }
  }

  private void backOff(Tier tier, Exception failed) {
    if (closed) {
      return;
    }
    Duration backoff;
    synchronized (tier) {
      backoff = tier.backoff;
      tier.backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
    }
    LOG.warn("starting a warm pool member of {} failed (next try in {} ms): {}", tier.templateId, backoff.toMillis(),
        failed.toString());
    long until = System.nanoTime() + backoff.toNanos();
    while (!closed && System.nanoTime() - until < 0) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException ie) {
        return;
      }
    }
  }

  /** The keeper: lets each pool fall back to its floor once creates stop, removing its surplus members. */
  private void keep() {
    while (!closed) {
      try {
        if (closing.await(Math.clamp(surplusAfterNanos / 4 / 1_000_000, 50, 1_000), java.util.concurrent.TimeUnit.MILLISECONDS)) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      }
      for (Tier tier : tiers.values()) {
        for (int surplus = tier.decay(System.nanoTime()); surplus > 0 && !closed; surplus--) {
          Member m = tier.ready.pollLast();
          if (m == null) {
            break;
          }
          maker.discard(m);
        }
      }
    }
  }

  /** Stops refilling and removes every member nobody claimed. */
  @Override
  public void close() {
    closed = true;
    closing.countDown();
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
    try {
      keeper.join(Duration.ofSeconds(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Tier tier : tiers.values()) {
      Member m;
      while ((m = tier.ready.pollFirst()) != null) {
        maker.discard(m);
      }
    }
  }
}
