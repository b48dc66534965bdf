package io.sandboxes.local.internal;

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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A directory watch inside a sandbox: the daemon's inotify watch, run as the requesting user, its
 * events turned into envd's filesystem events (name relative to the watched folder, and a type).
 */
public final class DirWatch implements AutoCloseable {

  /** One change, as envd reports it. */
  public record Change(String name, String type) {}

  /** A daemon write's temporary file ({@code .NAME.envd-XXXXXX} beside its target). */
  private static final Pattern TEMP = Pattern.compile("^(.*/)?\\.(.+)\\.envd-[A-Za-z0-9]{6}$");

  private final DaemonWatch watch;
  private final String root;
  private final LinkedBlockingQueue<Change> changes = new LinkedBlockingQueue<>(100_000);
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Targets of the daemon's atomic writes in flight: their temporary file's events are not shown. */
  private final Set<String> writing = ConcurrentHashMap.newKeySet();
  private volatile boolean ended;

  private DirWatch(DaemonWatch watch, String root) {
    this.watch = watch;
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
    DirWatch w = new DirWatch(dw, absolutePath);
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
      // the folder went away, or the sandbox did: the watch has ended
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
    Matcher m = TEMP.matcher(name);
    if (m.matches()) {
      writing.add((m.group(1) == null ? "" : m.group(1)) + m.group(2));
      return;
    }
    if (type.equals("EVENT_TYPE_CREATE") && writing.remove(name)) {
      changes.offer(new Change(name, type));
      changes.offer(new Change(name, "EVENT_TYPE_WRITE"));
      return;
    }
    changes.offer(new Change(name, type));
  }

  public String root() {
    return root;
  }

  /** The next change, waiting up to the given time; null when none came. */
  public @Nullable Change next(long timeout, TimeUnit unit) throws InterruptedException {
    return changes.poll(timeout, unit);
  }

  /** Every change since the last call. */
  public List<Change> drain() {
    List<Change> out = new ArrayList<>();
    changes.drainTo(out);
    return out;
  }

  /** @return whether the watch stopped on its own (the folder went away, or the sandbox did) */
  public boolean ended() {
    return ended && changes.isEmpty();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      watch.close();
    }
  }
}
