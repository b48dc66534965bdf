package io.sandboxes.local.internal;

import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.docker.RawExec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A directory watch inside a sandbox: {@code inotifywait} run as the requesting user, its events
 * turned into envd's filesystem events (name relative to the watched folder, and a type).
 */
public final class DirWatch implements AutoCloseable {

  /** One change, as envd reports it. */
  public record Change(String name, String type) {}

  private final LocalSandbox sandbox;
  private final @Nullable RawExec exec;
  private final io.sandboxes.local.internal.daemon.@Nullable DaemonWatch daemonWatch;
  private final String root;
  /** Targets of the daemon's atomic writes in flight: their temporary file's events are not shown. */
  private final java.util.Set<String> writing = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final LinkedBlockingQueue<Change> changes = new LinkedBlockingQueue<>(100_000);
  private final CountDownLatch established = new CountDownLatch(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean ended;
  private volatile int pid = -1;
  private final StringBuffer errors = new StringBuffer();

  private DirWatch(LocalSandbox sandbox, @Nullable RawExec exec, io.sandboxes.local.internal.daemon.@Nullable DaemonWatch dw,
      String root) {
    this.sandbox = sandbox;
    this.exec = exec;
    this.daemonWatch = dw;
    this.root = root.endsWith("/") && root.length() > 1 ? root.substring(0, root.length() - 1) : root;
  }

  /** Starts watching {@code absolutePath}, returning once the kernel watches are in place. */
  static DirWatch start(LocalSandbox sandbox, DockerRuntime docker, String user, String absolutePath, boolean recursive) throws RpcError {
    if (DaemonSwitch.on()) {
      io.sandboxes.local.internal.daemon.DaemonWatch dw;
      try {
        dw = sandbox.daemon().watch(absolutePath, user, recursive);
      } catch (IOException e) {
        throw DaemonFiles.error(e, absolutePath, "watch", user);
      }
      DirWatch w = new DirWatch(sandbox, null, dw, absolutePath);
      Thread.ofVirtual().name("sandboxes-watch-" + sandbox.id()).start(w::pumpDaemon);
      return w;
    }
    List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c",
        "command -v inotifywait >/dev/null || { echo 'sbx:no-inotifywait'; exit 127; }; echo \"sbx:pid:$$\"; exec inotifywait -m "
            + (recursive ? "-r " : "") + "--format '%e\t%w%f' -e create -e modify -e delete -e moved_from -e moved_to -e attrib -- \"$1\"",
        "sh", absolutePath));
    RawExec exec;
    try {
      exec = docker.exec(sandbox.containerId(), new DockerRuntime.ExecSpec(cmd, user, List.of(), false));
      exec.closeStdin();
    } catch (IOException | RuntimeException e) {
      throw new RpcError("unavailable", "watching " + absolutePath + " failed: " + e.getMessage());
    }
    DirWatch w = new DirWatch(sandbox, exec, null, absolutePath);
    Thread.ofVirtual().name("sandboxes-watch-" + sandbox.id()).start(w::pump);
    try {
      if (!w.established.await(30, TimeUnit.SECONDS) || w.ended) {
        w.close();
        String why = w.errors.toString().strip();
        if (why.contains("sbx:no-inotifywait")) {
          throw new RpcError("unimplemented", "this sandbox's template has no inotifywait, which watching needs");
        }
        throw new RpcError("internal", "the watch on " + absolutePath + " did not start: " + (why.isEmpty() ? "no answer" : why));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      w.close();
      throw new RpcError("canceled", "interrupted");
    }
    return w;
  }

  private void pumpDaemon() {
    io.sandboxes.local.internal.daemon.DaemonWatch dw = java.util.Objects.requireNonNull(daemonWatch);
    try {
      while (!closed.get()) {
        io.sandboxes.local.internal.daemon.WatchEvent e = dw.next(java.time.Duration.ofSeconds(1));
        if (e == null) {
          if (dw.finished()) {
            dw.next(java.time.Duration.ZERO); // throws when it failed
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
      errors.append(e.getMessage());
    } finally {
      ended = true;
      dw.close();
    }
  }

  /** The part of a daemon write's temporary name ({@code .NAME.envd-XXXXXX}) that names its target. */
  private static final java.util.regex.Pattern TEMP = java.util.regex.Pattern.compile("^(.*/)?\\.(.+)\\.envd-[A-Za-z0-9]{6}$");

  /**
   * Queues a change. The daemon writes a file as a temporary file renamed over it; a watcher is
   * shown what envd's write in place shows instead: the target created (or written), not the
   * temporary file.
   */
  private void emit(String name, String type) {
    java.util.regex.Matcher m = TEMP.matcher(name);
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

  private void pump() {
    RawExec exec = java.util.Objects.requireNonNull(this.exec);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      RawExec.Frame f;
      while ((f = exec.read()) != null) {
        ByteArrayOutputStream buf = f.stream() == RawExec.Stream.STDERR ? err : out;
        buf.write(f.data());
        String text = buf.toString(StandardCharsets.UTF_8);
        int nl;
        while ((nl = text.indexOf('\n')) >= 0) {
          String line = text.substring(0, nl);
          text = text.substring(nl + 1);
          if (f.stream() == RawExec.Stream.STDERR) {
            if (line.contains("Watches established")) {
              established.countDown();
            } else {
              errors.append(line).append('\n');
            }
          } else {
            onLine(line);
          }
        }
        buf.reset();
        buf.write(text.getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      errors.append(e.getMessage());
    } finally {
      ended = true;
      established.countDown();
      exec.close();
    }
  }

  private void onLine(String line) {
    if (line.startsWith("sbx:pid:")) {
      pid = Integer.parseInt(line.substring(8).strip());
      return;
    }
    if (line.startsWith("sbx:")) {
      errors.append(line).append('\n');
      return;
    }
    int tab = line.indexOf('\t');
    if (tab < 0) {
      return;
    }
    String events = line.substring(0, tab);
    String path = line.substring(tab + 1);
    String name = path.startsWith(root + "/") ? path.substring(root.length() + 1) : path;
    if (name.isEmpty()) {
      return;
    }
    for (String e : events.split(",")) {
      String type = switch (e) {
        case "CREATE", "MOVED_TO" -> "EVENT_TYPE_CREATE";
        case "MODIFY" -> "EVENT_TYPE_WRITE";
        case "DELETE" -> "EVENT_TYPE_REMOVE";
        case "MOVED_FROM" -> "EVENT_TYPE_RENAME";
        case "ATTRIB" -> "EVENT_TYPE_CHMOD";
        default -> null;
      };
      if (type != null) {
        emit(name, type);
      }
    }
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
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (daemonWatch != null) {
      daemonWatch.close();
      return;
    }
    int p = pid;
    if (p > 0 && !ended) {
      try {
        sandbox.docker().runAsRoot(sandbox.containerId(), "kill", "-9", Integer.toString(p));
      } catch (IOException | RuntimeException ignored) {
        // the exec closes below either way
      }
    }
    java.util.Objects.requireNonNull(exec).close();
  }
}
