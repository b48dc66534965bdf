package io.sandboxes.local.internal.daemon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A process the daemon runs, as seen through one attachment: its output events in order, then
 * its exit. Output not taken holds the daemon back (the process blocks on a full pipe once the
 * stream's credit is used up), so a consumer must read the events to see the exit. Closing the
 * handle detaches: the process runs on and can be attached again.
 */
public final class DaemonProcess implements FrameChannel.Sink, AutoCloseable {
  private final FrameChannel conn;
  /** The connection's typed calls, for the calls on this process's pid. */
  private final DaemonConnection calls;
  private final Flow<ProcessEvent> events;
  final CompletableFuture<Long> started = new CompletableFuture<>();
  private final CompletableFuture<ExitStatus> exit = new CompletableFuture<>();
  int stream;

  /** Gives this stream and its flow their id on the connection. */
  void bind(int id) {
    this.stream = id;
    events.stream = id;
  }

  DaemonProcess(DaemonConnection calls, FrameChannel conn) {
    this.calls = calls;
    this.conn = conn;
    this.events = new Flow<>(conn);
  }

  /** The request is sent: the stream's window may grow. */
  void opened() {
    events.open();
  }

  /** What the connection this process is seen through lets the host hold. */
  public Budget budget() {
    return conn.budget();
  }

  /** The process's pid inside the sandbox; also its process group and session id. */
  public long pid() {
    return started.join();
  }

  /**
   * The next event, blocking; null after the exit event has been taken.
   *
   * @throws DaemonException DISCONNECTED when the connection ended first
   */
  public @Nullable ProcessEvent next() throws IOException {
    return events.next(null);
  }

  /** The next event within a time, or null when none came (or the stream is over). */
  public @Nullable ProcessEvent next(Duration timeout) throws IOException {
    return events.next(timeout);
  }

  /** Completes with the exit as soon as it arrives (the output before it may still be unread). */
  public CompletableFuture<ExitStatus> exit() {
    return exit;
  }

  /** What a process printed and how it ended. */
  public record Result(byte[] stdout, byte[] stderr, ExitStatus status) {
    public String stdoutText() {
      return new String(stdout, java.nio.charset.StandardCharsets.UTF_8);
    }

    public String stderrText() {
      return new String(stderr, java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  /**
   * The most {@link #collect()} keeps of each stream: what a process in a sandbox prints is the
   * sandbox's to choose, and the server holds it in memory.
   */
  public static final int COLLECT_LIMIT = 16 * 1024 * 1024;

  /**
   * Reads every event to the end, keeping at most {@link #COLLECT_LIMIT} bytes of each stream;
   * PTY output counts as stdout.
   *
   * @throws DaemonException of kind {@code TOO_LARGE} when a stream passes the limit (the process
   *     is killed, its group with it)
   */
  public Result collect() throws IOException {
    return collect(COLLECT_LIMIT);
  }

  /**
   * Reads every event to the end, keeping at most {@code limit} bytes of each stream; PTY output
   * counts as stdout.
   *
   * @throws DaemonException of kind {@code TOO_LARGE} when a stream passes the limit (the process
   *     is killed, its group with it)
   */
  public Result collect(int limit) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    ProcessEvent e;
    while ((e = next()) != null) {
      if (e instanceof ProcessEvent.Output o) {
        ByteArrayOutputStream to = o.fd() == 2 ? err : out;
        if (to.size() + o.len() > limit) {
          try {
            signal(9, true);
          } catch (IOException ended) {
            // it ended meanwhile: the refusal below stands
          }
          throw new DaemonException(DaemonException.Kind.TOO_LARGE,
              "process " + pid() + " printed more than " + limit + " bytes on " + (o.fd() == 2 ? "stderr" : "stdout"));
        }
        to.write(o.buf(), o.off(), o.len());
      } else if (e instanceof ProcessEvent.Exit x) {
        return new Result(out.toByteArray(), err.toByteArray(), x.status());
      }
    }
    throw new DaemonException(DaemonException.Kind.PROTOCOL, "a process stream ended without an exit");
  }

  public void writeStdin(byte[] data) throws IOException {
    calls.writeStdin(pid(), data);
  }

  public void closeStdin() throws IOException {
    calls.closeStdin(pid());
  }

  public void signal(int signal, boolean group) throws IOException {
    calls.signal(pid(), signal, group);
  }

  public void resize(int cols, int rows) throws IOException {
    calls.resize(pid(), cols, rows);
  }

  /** Detaches; the process keeps running. */
  @Override
  public void close() {
    if (!events.ended()) {
      conn.cancel(stream);
    }
    events.close();
  }

  @Override
  public void frame(Frame f) throws ProtocolException {
    Wire.In p = new Wire.In(f.payload());
    switch (f.type()) {
      case Wire.PROC_STARTED -> {
        long pid = p.u32();
        p.end();
        if (started.isDone()) {
          throw new ProtocolException("a second PROC_STARTED");
        }
        started.complete(pid);
      }
      case Wire.PROC_OUTPUT -> {
        if (!started.isDone() || f.payload().length < 1) {
          throw new ProtocolException("output before the start, or without its fd");
        }
        int fd = f.payload()[0];
        if (fd < 1 || fd > 3) {
          throw new ProtocolException("output on fd " + fd);
        }
        int len = f.payload().length - 1;
        events.deliver(new ProcessEvent.Output(fd, f.payload(), 1, len), len);
      }
      case Wire.PROC_EXIT -> {
        boolean exited = p.u8() == 1;
        int code = p.i32();
        int signal = p.i32();
        boolean core = p.u8() == 1;
        p.end();
        if (!started.isDone()) {
          throw new ProtocolException("an exit before the start");
        }
        if (exited ? (signal != 0 || code < 0 || code > 255) : (code != 0 || signal < 1 || signal > 64)) {
          throw new ProtocolException("an impossible exit: exited=" + exited + " code=" + code + " signal=" + signal);
        }
        ExitStatus status = new ExitStatus(exited, code, signal, core);
        conn.forget(stream);
        events.deliverFree(new ProcessEvent.Exit(status));
        events.end();
        exit.complete(status);
      }
      case Wire.ERROR -> {
        DaemonException e = FrameChannel.error(f);
        conn.forget(stream);
        if (started.isDone()) {
          closed(e);
        } else {
          started.completeExceptionally(e);
        }
      }
      default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a process stream");
    }
  }

  @Override
  public void closed(DaemonException e) {
    started.completeExceptionally(e);
    events.fail(e);
    exit.completeExceptionally(e);
  }
}
