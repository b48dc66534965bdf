package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A watch on a folder (inotify in the sandbox). Events wait here, bounded by the stream's
 * credit; when the consumer falls behind, the daemon stops reading and the kernel's queue
 * overflows, which arrives as an {@link WatchEvent.Kind#OVERFLOW} event, never as silence.
 */
public final class DaemonWatch implements FrameChannel.Sink, AutoCloseable {
  private final FrameChannel conn;
  private final Flow<WatchEvent> events;
  final CompletableFuture<Void> ready = new CompletableFuture<>();
  int stream;

  /** Gives this stream and its flow their id on the connection. */
  void bind(int id) {
    this.stream = id;
    events.stream = id;
  }

  DaemonWatch(FrameChannel conn) {
    this.conn = conn;
    this.events = new Flow<>(conn);
  }

  /** The request is sent: the stream's window may grow. */
  void opened() {
    events.open();
  }

  /** What the connection this watch is seen through lets the host hold. */
  public Budget budget() {
    return conn.budget();
  }

  /** The next event within a time, or null. */
  public @Nullable WatchEvent next(Duration timeout) throws IOException {
    return events.next(timeout);
  }

  /** @return whether the stream's end (or failure) is the next thing to be taken */
  public boolean finished() {
    return events.finished();
  }

  @Override
  public void close() {
    if (!events.ended()) {
      conn.cancel(stream);
    }
    events.close();
  }

  @Override
  public void frame(Frame f) throws ProtocolException {
    switch (f.type()) {
      case Wire.WATCH_EVENT -> {
        Wire.In p = new Wire.In(f.payload());
        int kind = p.u8();
        String name = p.str(Wire.MAX_NAME);
        p.end();
        if (kind == 0) {
          if (!ready.complete(null)) {
            throw new ProtocolException("a second watch start");
          }
          return;
        }
        if (kind > WatchEvent.Kind.values().length || !ready.isDone()) {
          throw new ProtocolException("watch event kind " + kind);
        }
        events.deliver(new WatchEvent(WatchEvent.Kind.values()[kind - 1], name), f.payload().length);
      }
      case Wire.OK -> {
        conn.forget(stream);
        events.end();
      }
      case Wire.ERROR -> {
        DaemonException e = FrameChannel.error(f);
        conn.forget(stream);
        if (!ready.completeExceptionally(e)) {
          events.fail(e);
        }
      }
      default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a watch");
    }
  }

  @Override
  public void closed(DaemonException e) {
    ready.completeExceptionally(e);
    events.fail(e);
  }
}
