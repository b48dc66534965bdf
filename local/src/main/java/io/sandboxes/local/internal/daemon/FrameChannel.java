package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The frames of one daemon connection: the reader that hands each frame to its stream, the
 * writes, the table of open streams with its {@link Budget}, and the request-and-answer calls
 * every typed operation of {@link DaemonConnection} is made of.
 *
 * <p>The reader never blocks on a consumer and takes a bounded share of the CPU; a daemon that
 * breaks the protocol, or stops reading what the host writes for {@link #WRITE_STALL}, loses its
 * connection, and every stream in flight fails with {@link DaemonException.Kind#DISCONNECTED}.
 */
final class FrameChannel implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FrameChannel.class);
  /**
   * The most frames the host reads from one daemon in a {@link #SLICE}: a daemon flooding the
   * connection is slowed to this rate, so one sandbox's reader takes a bounded share of the CPU.
   */
  static final int FRAMES_PER_SLICE = 250;
  static final Duration SLICE = Duration.ofMillis(10);
  /** The reader lets other threads run after this many frames in a row. */
  static final int FRAMES_PER_YIELD = 64;

  /**
   * How long a write to the daemon may stay stuck (the daemon not reading) before the
   * connection is dropped: a daemon that never reads cannot hold a caller forever.
   */
  static final Duration WRITE_STALL = Duration.ofSeconds(20);

  /** Warnings about daemons' protocol violations are this far apart at least: a daemon cannot flood the log. */
  private static final Duration WARNING_GAP = Duration.ofSeconds(10);
  private static final java.util.concurrent.atomic.AtomicLong lastWarning = new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - (1L << 40));

  private final SocketChannel channel;
  private final InputStream in;
  private final Map<Integer, Sink> streams = new ConcurrentHashMap<>();
  private final Budget budget = new Budget();
  private final AtomicInteger nextStream = new AtomicInteger(1);
  private final Object writeLock = new Object();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile @Nullable String closeReason;
  private @Nullable Thread reader;
  /** When the write under way started (nanoTime), 0 when none is. */
  private volatile long writingSince;

  FrameChannel(SocketChannel channel, InputStream in) {
    this.channel = channel;
    this.in = in;
  }

  /** Starts reading frames and watching for stuck writes; once, right after the handshake. */
  void start() {
    reader = Thread.ofVirtual().name("sandboxes-daemon-reader").start(this::readLoop);
    Thread.ofVirtual().name("sandboxes-daemon-watchdog").start(this::watchdog);
  }

  public boolean isOpen() {
    return !closed.isDone();
  }

  /** Completes when the connection has ended, for whatever reason. */
  public CompletableFuture<Void> closedFuture() {
    return closed;
  }

  /** What this connection makes the host hold, and its bounds. */
  public Budget budget() {
    return budget;
  }

  /** Why the connection ended, or null while it is open. */
  public @Nullable String closeReason() {
    return closeReason;
  }

  @Override
  public void close() {
    shut("closed by the host");
    Thread r = reader;
    if (r != null && Thread.currentThread() != r) {
      try {
        r.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void shut(String reason) {
    synchronized (this) {
      if (closeReason != null) {
        return;
      }
      closeReason = reason;
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    DaemonException gone = new DaemonException(DaemonException.Kind.DISCONNECTED, "the sandbox daemon's connection ended: " + reason);
    for (Sink s : streams.values()) {
      s.closed(gone);
    }
    streams.clear();
    closed.complete(null);
  }

  private void readLoop() {
    String reason = "the daemon closed the connection";
    try {
      Frame f;
      long sliceEnd = System.nanoTime() + SLICE.toNanos();
      int inSlice = 0;
      int sinceYield = 0;
      while ((f = Frame.read(in)) != null) {
        if (++inSlice > FRAMES_PER_SLICE) {
          long left = sliceEnd - System.nanoTime();
          if (left > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(left); // over its rate: the daemon waits
          }
          sliceEnd = System.nanoTime() + SLICE.toNanos();
          inSlice = 1;
          sinceYield = 0;
        } else if (++sinceYield >= FRAMES_PER_YIELD) {
          sinceYield = 0;
          Thread.yield(); // a reader with data always waiting never blocks: let others run
        }
        if (System.nanoTime() - sliceEnd > 0) {
          sliceEnd = System.nanoTime() + SLICE.toNanos();
          inSlice = 1;
        }
        if (f.stream() == 0) {
          throw new ProtocolException("a frame on stream 0 after HELLO");
        }
        if (Integer.compareUnsigned(f.stream(), nextStream.get()) >= 0) {
          throw new ProtocolException("a frame on stream " + Integer.toUnsignedString(f.stream()) + ", which the host never opened");
        }
        Sink s = streams.get(f.stream());
        if (s != null) {
          try {
            s.frame(f); // frames of a stream already ended or cancelled are dropped
          } catch (ProtocolException e) {
            // the stream whose frame broke the protocol may already have left the table
            s.closed(new DaemonException(DaemonException.Kind.DISCONNECTED,
                "the sandbox daemon's connection ended: protocol violation: " + e.getMessage()));
            throw e;
          }
        }
      }
    } catch (ProtocolException e) {
      reason = "protocol violation: " + e.getMessage();
      long now = System.nanoTime();
      long last = lastWarning.get();
      if (now - last > WARNING_GAP.toNanos() && lastWarning.compareAndSet(last, now)) {
        LOG.warn("dropping a sandbox daemon's connection: {}", e.getMessage());
      } else {
        LOG.debug("dropping a sandbox daemon's connection: {}", e.getMessage());
      }
    } catch (IOException e) {
      reason = closeReason != null ? closeReason : "read failed: " + e.getMessage();
    } catch (RuntimeException e) {
      reason = "host error: " + e;
      LOG.warn("dropping a sandbox daemon's connection after a host error", e);
    } finally {
      shut(reason);
    }
  }

  /** Drops the connection when a write has been stuck for {@link #WRITE_STALL}. */
  private void watchdog() {
    while (isOpen()) {
      try {
        closed.get(1, TimeUnit.SECONDS);
        return;
      } catch (TimeoutException e) {
        long since = writingSince;
        if (since != 0 && System.nanoTime() - since > WRITE_STALL.toNanos()) {
          shut("the daemon has not read what the host sent for " + WRITE_STALL.toSeconds() + " s");
        }
      } catch (InterruptedException | ExecutionException e) {
        return;
      }
    }
  }

  // ---- sending ----

  void send(int type, int flags, int stream, byte[] payload) throws IOException {
    send(type, flags, stream, payload, 0, payload.length);
  }

  void send(int type, int flags, int stream, byte[] data, int off, int len) throws IOException {
    if (len > Wire.MAX_PAYLOAD) {
      throw new IllegalArgumentException("payload of " + len + " bytes");
    }
    ByteBuffer h = ByteBuffer.allocate(Wire.HEADER);
    h.putInt(len).putInt(stream).put((byte) type).put((byte) flags).putShort((short) 0).flip();
    ByteBuffer[] bufs = {h, ByteBuffer.wrap(data, off, len)};
    synchronized (writeLock) {
      if (!isOpen()) {
        throw disconnected();
      }
      writingSince = System.nanoTime() | 1;
      try {
        while (bufs[1].hasRemaining() || h.hasRemaining()) {
          channel.write(bufs);
        }
      } catch (IOException e) {
        shut("write failed: " + e.getMessage());
        throw disconnected();
      } finally {
        writingSince = 0;
      }
    }
  }

  private DaemonException disconnected() {
    return new DaemonException(DaemonException.Kind.DISCONNECTED, "the sandbox daemon's connection ended: " + closeReason);
  }

  int register(Sink sink) throws DaemonException {
    if (!budget.openStream()) {
      throw new DaemonException(DaemonException.Kind.LIMIT,
          "the sandbox's daemon has " + Budget.MAX_STREAMS + " calls and streams open, the most the server allows");
    }
    int id = nextStream.getAndIncrement();
    if (id <= 0) {
      shut("stream ids exhausted");
    }
    streams.put(id, sink);
    if (!isOpen()) {
      forget(id);
      throw disconnected();
    }
    return id;
  }

  void forget(int stream) {
    if (streams.remove(stream) != null) {
      budget.closeStream();
    }
  }

  /**
   * Ends a stream from the reader thread, which must never wait on a write: the CANCEL goes
   * from a thread of its own.
   */
  void cancelFromReader(int stream) {
    forget(stream);
    Thread.ofVirtual().name("sandboxes-daemon-cancel").start(() -> cancel(stream));
  }

  /** Ends a stream from the host side: the daemon stops sending on it. */
  void cancel(int stream) {
    forget(stream);
    try {
      send(Wire.CANCEL, 0, stream, new byte[0]);
    } catch (IOException ignored) {
      // the connection is gone; so is the stream
    }
  }

  void credit(int stream, int n) {
    try {
      send(Wire.CREDIT, 0, stream, new Wire.Out().u32(n).toBytes());
    } catch (IOException ignored) {
      // the connection is gone: the stream will learn it from its own end
    }
  }

  /** A stream's receiving end, called on the reader thread; must never block. */
  interface Sink {
    void frame(Frame f) throws ProtocolException;

    void closed(DaemonException e);
  }

  static DaemonException error(Frame f) throws ProtocolException {
    Wire.In p = new Wire.In(f.payload());
    int kind = p.u16();
    int errno = p.i32();
    String message = p.str(Wire.MAX_NAME);
    p.end();
    return new DaemonException(DaemonException.Kind.of(kind), errno, message);
  }

  /** Reads one answer item; a malformed one is a protocol violation. */
  interface Parser<T> {
    T parse(Wire.In in) throws ProtocolException;
  }

  /**
   * A call answered by items and then OK, or by ERROR. Each item is parsed as it arrives (on
   * the reader thread, so a malformed one drops the connection) and charged to the connection's
   * {@link Budget} until the call is over; an answer with more items than the call allows, or
   * more than the budget has room for, fails the call with {@link DaemonException.Kind#TOO_LARGE}
   * (and is cancelled), or, when the call has exactly one answer item, is a protocol violation.
   */
  private final class Call<T> implements Sink {
    final int itemType;
    final @Nullable Parser<T> parser;
    final int maxItems;
    final boolean exact;
    final List<T> items = new ArrayList<>();
    final CompletableFuture<List<T>> done = new CompletableFuture<>();
    long charged;
    int stream;

    Call(int itemType, @Nullable Parser<T> parser, int maxItems, boolean exact) {
      this.itemType = itemType;
      this.parser = parser;
      this.maxItems = maxItems;
      this.exact = exact;
    }

    @Override
    public synchronized void frame(Frame f) throws ProtocolException {
      if (done.isDone()) {
        return; // given up on (too large, or out of time): what still comes is dropped
      }
      if (f.type() == Wire.OK) {
        forget(stream);
        if (exact && items.size() != maxItems) {
          throw new ProtocolException(items.size() + " answer items where " + maxItems + " were expected");
        }
        done.complete(items);
      } else if (f.type() == Wire.ERROR) {
        DaemonException e = error(f);
        forget(stream);
        release();
        done.completeExceptionally(e);
      } else if (f.type() == itemType && parser != null) {
        if (items.size() >= maxItems && exact) {
          throw new ProtocolException("more than " + maxItems + " answer items to a call that has " + maxItems);
        }
        long cost = (long) f.payload().length + Budget.ITEM_COST;
        if (items.size() >= maxItems || !budget.chargeCall(cost)) {
          cancelFromReader(stream);
          release();
          done.completeExceptionally(new DaemonException(DaemonException.Kind.TOO_LARGE, items.size() >= maxItems
              ? "the answer has more than " + maxItems + " items"
              : "the answer is larger than the server holds for one sandbox's calls (" + (Budget.CALL_POOL >> 20) + " MiB)"));
          return;
        }
        charged += cost;
        Wire.In in = new Wire.In(f.payload());
        T item = parser.parse(in);
        in.end();
        items.add(item);
      } else {
        throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " in answer to a call");
      }
    }

    /** Gives the items' charge back (once the caller has them, or the call failed). */
    synchronized void release() {
      budget.releaseCall(charged);
      charged = 0;
    }

    @Override
    public void closed(DaemonException e) {
      done.completeExceptionally(e);
    }
  }

  /** Sends one request with no answer items and waits for its OK. */
  void call(int type, byte[] payload, Duration timeout) throws IOException {
    call(type, payload, -1, null, 0, true, timeout);
  }

  /**
   * Sends one request and waits for its items and OK.
   *
   * @param maxItems the most items the answer may have
   * @param exact whether it must have exactly {@code maxItems}
   */
  <T> List<T> call(int type, byte[] payload, int itemType, @Nullable Parser<T> parser, int maxItems, boolean exact,
      Duration timeout) throws IOException {
    Call<T> c = new Call<>(itemType, parser, maxItems, exact);
    c.stream = register(c);
    try {
      send(type, 0, c.stream, payload);
      return await(c.done, c.stream, timeout);
    } finally {
      c.release();
    }
  }

  /**
   * Waits for a stream's answer for up to {@code timeout}; when none came, the stream is
   * cancelled and the call fails with {@link DaemonException.Kind#TIMEOUT}: its outcome in the
   * sandbox is unknown.
   */
  <T> T await(CompletableFuture<T> f, int stream, Duration timeout) throws IOException {
    try {
      return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      cancel(stream);
      f.completeExceptionally(new DaemonException(DaemonException.Kind.TIMEOUT, "gave up"));
      throw new DaemonException(DaemonException.Kind.TIMEOUT,
          "the sandbox daemon did not answer within " + timeout.toSeconds() + " s; the outcome is unknown");
    } catch (InterruptedException e) {
      cancel(stream);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for the sandbox daemon");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof DaemonException d) {
        // a fresh exception carrying this thread's stack, with the daemon's as its cause
        DaemonException mine = new DaemonException(d.kind(), d.errno(), d.getMessage());
        mine.initCause(d);
        throw mine;
      }
      if (cause instanceof IOException io) {
        throw io;
      }
      throw new IOException(cause);
    }
  }
}
