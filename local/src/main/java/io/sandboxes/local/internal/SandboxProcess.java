package io.sandboxes.local.internal;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import io.sandboxes.local.internal.daemon.Budget;
import io.sandboxes.local.internal.daemon.DaemonProcess;
import org.jspecify.annotations.Nullable;

/**
 * One process started through envd's {@code Start}: the daemon's one attachment to it, whose
 * output is fanned out to every Connect client attached ({@code Start}'s, then any
 * {@code Connect}'s). It lives independently of the request that started it; output produced
 * while nobody is attached is dropped, as envd does.
 */
public final class SandboxProcess {

  /** What attached streams receive. */
  public sealed interface Event permits Data, End, Failure, Severed {}

  /** Which of a process's outputs a chunk came from: its stdout, its stderr, or its pseudo-terminal. */
  public enum Stream { STDOUT, STDERR, PTY }

  /** A chunk of output. */
  public record Data(Stream stream, byte[] buf, int off, int len) implements Event {}

  /**
   * The process ended.
   *
   * @param exitCode the code to report; -1 for a signal or an unobservable outcome
   * @param exited whether it exited by itself
   * @param status envd's status text, e.g. {@code exit status 3} or {@code signal: killed}
   * @param error the error text, when it did not exit 0
   */
  public record End(int exitCode, boolean exited, String status, @Nullable String error) implements Event {}

  /** The stream must end with a Connect error instead of an end event. */
  public record Failure(String code, String message) implements Event {}

  /**
   * The stream must break off, with no end and no error, as a connection into a sandbox that has
   * gone does on E2B (its clients then ask the control plane what happened).
   */
  public record Severed(String why) implements Event {}

  /**
   * A client attached to the process's output. What waits for it is charged to the daemon
   * connection's {@link Budget} (its hold pool), so however many clients are attached and
   * however slowly they read, the output kept for them is bounded per sandbox.
   */
  public static final class Subscriber {
    private static final java.time.Duration STALL = java.time.Duration.ofSeconds(30);
    private final BlockingQueue<Event> queue = new ArrayBlockingQueue<>(1024);
    private final Budget budget;

    Subscriber(Budget budget) {
      this.budget = budget;
    }

    public @Nullable Event poll(long timeout, TimeUnit unit) throws InterruptedException {
      Event e = queue.poll(timeout, unit);
      if (e != null) {
        budget.release(cost(e));
      }
      return e;
    }

    private static long cost(Event e) {
      return e instanceof Data d ? Budget.holdCost(d.len()) : 0;
    }

    /** Drops what waits unread and puts {@code e} next: the stream is cut where it is. */
    void cut(Event e) {
      drop();
      while (!queue.offer(e)) {
        Event old = queue.poll();
        if (old != null) {
          budget.release(cost(old));
        }
      }
    }

    /** Drops what waits unread. */
    void drop() {
      Event old;
      while ((old = queue.poll()) != null) {
        budget.release(cost(old));
      }
    }

    boolean offer(Event e) {
      long cost = cost(e);
      try {
        if (!budget.hold(cost, STALL)) {
          return false;
        }
        if (!queue.offer(e, STALL.toSeconds(), TimeUnit.SECONDS)) {
          budget.release(cost);
          return false;
        }
        return true;
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  private final int pid;
  private final @Nullable String tag;
  private final String cmd;
  private final List<String> args;
  private final Map<String, String> envs;
  private final @Nullable String cwd;
  private final boolean pty;
  private final DaemonProcess daemon;
  private volatile long finishedAtNanos;
  private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();
  private volatile @Nullable End end;
  private volatile @Nullable Event terminal;
  private final java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);

  /** Told once, when the end is recorded (finished or abandoned). */
  private final java.util.function.Consumer<SandboxProcess> onEnd;

  /**
   * A process the in-sandbox daemon runs, seen through one attachment that this object fans out.
   *
   * @param onEnd told once its end is recorded
   */
  SandboxProcess(int pid, @Nullable String tag, String cmd, List<String> args, Map<String, String> envs,
      @Nullable String cwd, boolean pty, DaemonProcess daemon, java.util.function.Consumer<SandboxProcess> onEnd) {
    this.onEnd = onEnd;
    this.pid = pid;
    this.tag = tag;
    this.cmd = cmd;
    this.args = List.copyOf(args);
    this.envs = Map.copyOf(envs);
    this.cwd = cwd;
    this.pty = pty;
    this.daemon = daemon;
  }

  /** @return the daemon's attachment */
  DaemonProcess daemon() {
    return daemon;
  }

  public int pid() {
    return pid;
  }

  public @Nullable String tag() {
    return tag;
  }

  public String cmd() {
    return cmd;
  }

  public List<String> args() {
    return args;
  }

  public Map<String, String> envs() {
    return envs;
  }

  public @Nullable String cwd() {
    return cwd;
  }

  public boolean pty() {
    return pty;
  }

  public @Nullable End end() {
    return end;
  }

  /**
   * Waits for the process to end.
   *
   * @return true when it ended within {@code timeout}, false when the time passed first
   */
  boolean awaitEnd(java.time.Duration timeout) throws InterruptedException {
    return ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  long finishedAtNanos() {
    return finishedAtNanos;
  }

  /** Attaches a subscriber; a finished process gives it its end event at once. */
  public Subscriber subscribe() {
    Subscriber s = new Subscriber(daemon.budget());
    subscribers.add(s);
    Severed cut = severed;
    if (cut != null) {
      subscribers.remove(s);
      s.cut(cut);
      return s;
    }
    Event last = terminal;
    if (last != null) {
      subscribers.remove(s);
      s.offer(last);
    }
    return s;
  }

  private volatile @Nullable Severed severed;

  /** Breaks every attached stream off now, and any attached later: the sandbox is going away. */
  void sever(String why) {
    Severed cut = new Severed(why);
    severed = cut;
    for (Subscriber s : subscribers) {
      s.cut(cut);
    }
    subscribers.clear();
  }

  public void unsubscribe(Subscriber s) {
    subscribers.remove(s);
    s.drop();
  }

  void deliver(Event event) {
    for (Subscriber s : subscribers) {
      if (!s.offer(event)) {
        // a client that does not read for 30 s is dropped rather than stalling the process
        subscribers.remove(s);
      }
    }
  }

  /**
   * Pumps the daemon's events to every subscriber until the exit, then reports the end. Output
   * nobody is attached to is dropped, as envd does; a subscriber that stops reading holds the
   * process back (through the daemon's credit) for at most 30 s before it is dropped.
   */
  void pumpDaemon(java.util.function.BooleanSupplier sandboxLost) {
    DaemonProcess d = daemon;
    End e = null;
    String lost = null;
    try {
      io.sandboxes.local.internal.daemon.ProcessEvent ev;
      while ((ev = d.next()) != null) {
        if (ev instanceof io.sandboxes.local.internal.daemon.ProcessEvent.Output o) {
          deliver(new Data(o.fd() == 2 ? Stream.STDERR : o.fd() == 3 ? Stream.PTY : Stream.STDOUT,
              o.buf(), o.off(), o.len()));
        } else if (ev instanceof io.sandboxes.local.internal.daemon.ProcessEvent.Exit x) {
          e = toEnd(x.status());
          break;
        }
      }
    } catch (IOException ex) {
      // the daemon went away (its worker died, or the container stopped): the outcome is unknown
      lost = ex.getMessage();
    } finally {
      d.close();
    }
    if (e == null && sandboxLost.getAsBoolean()) {
      return; // the whole sandbox ended under it: its attached clients were told why
    }
    if (e == null) {
      // nothing is made up: attached streams end with an error saying the outcome is unknown,
      // and the table keeps the process as ended with no exit status
      String why = "the process's outcome cannot be observed: " + (lost != null ? lost : "its output stream ended without an exit");
      finish(new End(-1, false, "unknown", why), new Failure("unavailable", why));
      return;
    }
    finish(e, e);
  }

  /**
   * Ends every attached stream with {@code failure} instead of an end event: the sandbox itself
   * is gone, so the process's outcome will never be known.
   */
  void abandon(Failure failure) {
    if (end != null) {
      return;
    }
    deliver(failure);
    finishedAtNanos = System.nanoTime();
    terminal = failure;
    end = new End(-1, false, "unknown", failure.message());
    subscribers.clear();
    ended.countDown();
    onEnd.accept(this);
  }

  static End toEnd(io.sandboxes.local.internal.daemon.ExitStatus status) {
    String text = status.describe();
    if (!status.exited()) {
      return new End(-1, false, text, text);
    }
    return new End(status.exitCode(), true, text, status.exitCode() == 0 ? null : text);
  }

  /** Records the end, and gives attached streams (and any that attach later) {@code last}. */
  private void finish(End e, Event last) {
    if (end != null) {
      return; // abandoned already
    }
    finishedAtNanos = System.nanoTime();
    terminal = last;
    end = e;
    for (Subscriber s : subscribers) {
      s.offer(last);
    }
    subscribers.clear();
    ended.countDown();
    onEnd.accept(this);
  }

  public void writeInput(byte[] data) throws IOException {
    daemon.writeStdin(data);
  }

  public void closeInput() throws IOException {
    daemon.closeStdin();
  }
}
