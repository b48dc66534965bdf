package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonWatch;
import io.sandboxes.local.internal.daemon.WatchEvent;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A directory watch inside a sandbox: the daemon's inotify watch, run as the requesting user, its
 * events turned into envd's filesystem events (name relative to the watched folder, and a type).
 */
public final class DirWatch implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DirWatch.class);

  /** One change, as envd reports it. */
  public record Change(String name, String type) {}

  /** The end of a daemon write's temporary file's name ({@code .NAME.envd-XXXXXX} beside its target). */
  private static final String TEMP_SUFFIX = ".envd-";
  private static final int TEMP_TAIL = TEMP_SUFFIX.length() + 6;

  /**
   * The target a daemon write's temporary file stands for ({@code dir/.NAME.envd-XXXXXX} for
   * {@code dir/NAME}), or null when the name is not one. In one pass: names come from the sandbox,
   * and a backtracking pattern over a crafted 4 kB name took 0.2 s.
   */
  static @Nullable String writeTarget(String name) {
    int n = name.length();
    if (n < 2 + TEMP_TAIL || !name.startsWith(TEMP_SUFFIX, n - TEMP_TAIL)) {
      return null;
    }
    for (int i = n - 6; i < n; i++) {
      char c = name.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) {
        return null;
      }
    }
    int dot = name.lastIndexOf('/', n - TEMP_TAIL - 1) + 1;
    if (name.charAt(dot) != '.' || dot + 1 >= n - TEMP_TAIL) {
      return null;
    }
    return name.substring(0, dot) + name.substring(dot + 1, n - TEMP_TAIL);
  }

  /** The most a watcher keeps for a client that does not ask for its events: beyond, new ones are dropped. */
  static final long MAX_KEPT = 1L << 20;
  /** The most writes in flight whose temporary files are told apart from real files. */
  static final int MAX_WRITING = 1024;

  private final DaemonWatch watch;
  private final String root;
  private final LinkedBlockingQueue<Change> changes = new LinkedBlockingQueue<>(100_000);
  /** What the queued changes are charged (in the daemon connection's hold pool); guarded by changes. */
  private long kept;
  private volatile boolean dropping;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Targets of the daemon's atomic writes in flight: their temporary file's events are not shown. */
  private final Set<String> writing = ConcurrentHashMap.newKeySet();
  private volatile boolean ended;
  /** Asks, once the daemon's connection dropped under the watch, whether the whole sandbox ended. */
  private final java.util.function.BooleanSupplier sandboxLost;
  private volatile boolean sandboxEnded;

  private DirWatch(DaemonWatch watch, String root, java.util.function.BooleanSupplier sandboxLost) {
    this.watch = watch;
    this.sandboxLost = sandboxLost;
    this.root = root.endsWith("/") && root.length() > 1 ? root.substring(0, root.length() - 1) : root;
  }

  /** Starts watching {@code absolutePath}, returning once the kernel watches are in place. */
  static DirWatch start(LocalSandbox sandbox, String user, String absolutePath, boolean recursive) throws RpcError {
    DaemonWatch dw;
    try {
      dw = sandbox.viaDaemon(d -> d.watch(absolutePath, user, recursive), DaemonWatch::close);
    } catch (IOException e) {
      throw DaemonFiles.error(e, absolutePath, "watch", user);
    }
    DirWatch w = new DirWatch(dw, absolutePath, sandbox::endedUnderItsDaemon);
    Thread.ofVirtual().name("sandboxes-watch-" + sandbox.id()).start(w::pump);
    return w;
  }

  private void pump() {
    try {
      while (!closed.get()) {
        WatchEvent e = watch.next(Duration.ofSeconds(1));
        if (e == null) {
          if (watch.finished()) {
            watch.next(Duration.ZERO); // throws when the watch failed
            break;
          }
          continue;
        }
        String type = switch (e.kind()) {
          case CREATE -> "EVENT_TYPE_CREATE";
          case WRITE -> "EVENT_TYPE_WRITE";
          case REMOVE -> "EVENT_TYPE_REMOVE";
          case RENAME -> "EVENT_TYPE_RENAME";
          case CHMOD -> "EVENT_TYPE_CHMOD";
          case OVERFLOW -> null; // envd has no event for lost events
        };
        if (type != null && !e.name().isEmpty()) {
          emit(e.name(), type);
        }
      }
    } catch (IOException e) {
      // the folder went away, or the sandbox did (killed, or its container stopped): the watch has
      // ended, and which of the two it was is told apart for the client
      if (!closed.get() && e instanceof io.sandboxes.local.internal.daemon.DaemonException d
          && d.kind() == io.sandboxes.local.internal.daemon.DaemonException.Kind.DISCONNECTED) {
        sandboxEnded = sandboxLost.getAsBoolean();
      }
    } finally {
      ended = true;
      watch.close();
    }
  }

  /**
   * Queues a change. The daemon writes a file as a temporary file renamed over it; a watcher is
   * shown what envd's write in place shows instead: the target created and written, not the
   * temporary file.
   */
  private void emit(String name, String type) {
    String target = writeTarget(name);
    if (target != null) {
      if (writing.size() < MAX_WRITING) {
        writing.add(target);
      }
      return;
    }
    if (type.equals("EVENT_TYPE_CREATE") && writing.remove(name)) {
      queue(new Change(name, type));
      queue(new Change(name, "EVENT_TYPE_WRITE"));
      return;
    }
    queue(new Change(name, type));
  }

  private static long cost(Change c) {
    return io.sandboxes.local.internal.daemon.Budget.holdCost(2 * c.name().length());
  }

  /** Keeps a change for the client while this watcher's and the sandbox's bounds allow. */
  private void queue(Change c) {
    long cost = cost(c);
    synchronized (changes) {
      boolean room = kept + cost <= MAX_KEPT;
      try {
        room = room && watch.budget().hold(cost, Duration.ZERO);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        room = false;
      }
      if (!room || !changes.offer(c)) {
        if (room) {
          watch.budget().release(cost);
        }
        if (!dropping) {
          dropping = true;
          LOG.info("a watcher of {} is not being read: its events are dropped until it is", root);
        }
        return;
      }
      kept += cost;
      dropping = false;
    }
  }

  private void taken(Change c) {
    long cost = cost(c);
    synchronized (changes) {
      kept -= cost;
    }
    watch.budget().release(cost);
  }

  public String root() {
    return root;
  }

  /** The next change, waiting up to the given time; null when none came. */
  public @Nullable Change next(long timeout, TimeUnit unit) throws InterruptedException {
    Change c = changes.poll(timeout, unit);
    if (c != null) {
      taken(c);
    }
    return c;
  }

  /** Every change since the last call. */
  public List<Change> drain() {
    List<Change> out = new ArrayList<>();
    changes.drainTo(out);
    out.forEach(this::taken);
    return out;
  }

  /** @return whether the watch stopped on its own (the folder went away, or the sandbox did) */
  public boolean ended() {
    return ended && changes.isEmpty();
  }

  /**
   * @return whether the watch {@link #ended()} because its whole sandbox ended (killed, or its
   *     container stopped), rather than its folder going away: E2B's stream then breaks off, and
   *     its SDKs find out from the sandbox's health that it is gone
   */
  public boolean sandboxEnded() {
    return sandboxEnded && ended();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      watch.close();
      drain();
    }
  }
}
