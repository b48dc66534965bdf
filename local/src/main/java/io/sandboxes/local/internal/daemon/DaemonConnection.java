package io.sandboxes.local.internal.daemon;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * One live connection from a sandbox's daemon, with typed calls for processes and files.
 *
 * <p>Every call is a stream of its own on the connection. A virtual thread reads frames and hands
 * each to its stream without ever blocking on a consumer: process output, file reads and watch
 * events are credit-controlled, so what waits for a slow consumer is bounded by {@link
 * Wire#WINDOW} per stream; a daemon that sends beyond its credit, or any malformed frame, ends the
 * connection. When the connection ends, every call in flight fails with {@link
 * DaemonException.Kind#DISCONNECTED}: its outcome inside the sandbox is unknown and is not guessed.
 *
 * <p>Nothing the daemon says is believed beyond its own sandbox: pids, paths and statuses are
 * data about that sandbox only; no answer names a host path.
 */
public final class DaemonConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DaemonConnection.class);
  /** Largest stdin or file-data chunk the host sends in one frame. */
  static final int CHUNK = 256 * 1024;
  /** Most entries one listing collects before it gives up. */
  static final int MAX_LIST_ITEMS = 100_000;
  /** Most processes one process list collects before it gives up. */
  static final int MAX_PROCESSES = 4096;
  /** How long a quick call (stat, start, signal, ping…) waits for its answer. */
  static final Duration ANSWER = Duration.ofSeconds(30);
  /** How long a call whose work grows with the sandbox's data (a listing, a removal, a write's end) waits. */
  static final Duration LONG_ANSWER = Duration.ofMinutes(5);
  /** How long a write to a process's stdin waits for the process to take it. */
  static final Duration STDIN_ANSWER = Duration.ofSeconds(60);
  /** How long a file read waits for its next chunk. */
  static final Duration CHUNK_WAIT = Duration.ofSeconds(60);
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

  /** What the daemon said when it connected. */
  public record Hello(long workerPid, long generation) {}

  private final SocketChannel channel;
  private final InputStream in;
  private final Hello hello;
  private final Map<Integer, Sink> streams = new ConcurrentHashMap<>();
  private final Budget budget = new Budget();
  private final AtomicInteger nextStream = new AtomicInteger(1);
  private final Object writeLock = new Object();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile @Nullable String closeReason;
  private @Nullable Thread reader;
  /** When the write under way started (nanoTime), 0 when none is. */
  private volatile long writingSince;

  private DaemonConnection(SocketChannel channel, InputStream in, Hello hello) {
    this.channel = channel;
    this.in = in;
    this.hello = hello;
  }

  /**
   * Reads the daemon's HELLO from a freshly accepted channel and starts serving it. The caller
   * bounds the wait (by closing the channel).
   */
  static DaemonConnection handshake(SocketChannel channel) throws IOException {
    InputStream in = new BufferedInputStream(Channels.newInputStream(channel), 256 * 1024);
    Frame f = Frame.read(in);
    if (f == null || f.type() != Wire.HELLO || f.stream() != 0) {
      throw new ProtocolException("the first frame was not a HELLO");
    }
    Wire.In p = new Wire.In(f.payload());
    int version = p.u16();
    long pid = p.u32();
    long generation = p.u32();
    if (version != Wire.VERSION) {
      throw new ProtocolException("a daemon of protocol " + version + "; this host speaks " + Wire.VERSION);
    }
    long maxPayload = p.u32();
    long window = p.u32();
    long initial = p.u32();
    long frameCost = p.u32();
    p.end();
    if (maxPayload != Wire.MAX_PAYLOAD || window != Wire.WINDOW || initial != Wire.INITIAL_CREDIT
        || frameCost != Wire.FRAME_COST) {
      throw new ProtocolException("a daemon with frames of " + maxPayload + ", window " + window + ", initial credit "
          + initial + " and frame cost " + frameCost + ", which this host does not speak");
    }
    DaemonConnection c = new DaemonConnection(channel, in, new Hello(pid, generation));
    c.reader = Thread.ofVirtual().name("sandboxes-daemon-reader").start(c::readLoop);
    Thread.ofVirtual().name("sandboxes-daemon-watchdog").start(c::watchdog);
    return c;
  }

  /** The daemon's worker pid (in the sandbox) and how many workers died before it. */
  public Hello hello() {
    return hello;
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

  // ---- calls ----

  /** A round trip that does nothing. */
  public void ping() throws IOException {
    ping(ANSWER);
  }

  /** A round trip that does nothing, failing with {@link DaemonException.Kind#TIMEOUT} when it takes longer than {@code timeout}. */
  public void ping(Duration timeout) throws IOException {
    call(Wire.PING, new byte[0], timeout);
  }

  /**
   * Starts a process. Its output is delivered to the handle, which owns the only attachment of
   * this connection to it until closed.
   */
  public DaemonProcess start(ProcessSpec spec) throws IOException {
    Wire.Out p = new Wire.Out().strs(spec.argv());
    List<String> env = new ArrayList<>();
    spec.env().forEach((k, v) -> env.add(k + "=" + v));
    p.strs(env).str(spec.cwd() == null ? "" : checked(spec.cwd())).str(spec.user() == null ? "" : checked(spec.user()))
        .str(spec.tag() == null ? "" : spec.tag())
        .u8((spec.pty() != null ? 1 : 0) | (spec.stdin() || spec.pty() != null ? 2 : 0))
        .u16(spec.pty() == null ? 0 : spec.pty().cols()).u16(spec.pty() == null ? 0 : spec.pty().rows());
    return open(Wire.PROC_START, p.toBytes());
  }

  /** Attaches to a process the daemon runs (output from now on; its exit if it already ended). */
  public DaemonProcess attach(long pid) throws IOException {
    return open(Wire.PROC_ATTACH, new Wire.Out().u32(pid).toBytes());
  }

  private DaemonProcess open(int type, byte[] payload) throws IOException {
    DaemonProcess proc = new DaemonProcess(this);
    int stream = register(proc);
    proc.bind(stream);
    try {
      send(type, 0, stream, payload);
      proc.opened();
      await(proc.started, stream, ANSWER);
    } catch (IOException | RuntimeException e) {
      proc.close();
      throw e;
    }
    return proc;
  }

  /** The daemon's running processes. */
  public List<ProcessInfo> processes() throws IOException {
    List<ProcessInfo> out = new ArrayList<>();
    return call(Wire.PROC_LIST, new byte[0], Wire.PROC_INFO, p -> {
      long pid = p.u32();
      String tag = p.str(Wire.MAX_NAME);
      int flags = p.u8();
      List<String> argv = p.strs();
      List<String> env = p.strs();
      String cwd = p.str(Wire.MAX_NAME);
      return new ProcessInfo(pid, tag.isEmpty() ? null : tag, (flags & 1) != 0, (flags & 2) != 0, argv, env, cwd);
    }, MAX_PROCESSES, false, ANSWER);
  }

  /** Writes to a process's stdin (or its PTY); returns once the bytes are in the pipe. */
  public void writeStdin(long pid, byte[] data) throws IOException {
    int off = 0;
    do {
      int n = Math.min(CHUNK, data.length - off);
      byte[] chunk = java.util.Arrays.copyOfRange(data, off, off + n);
      call(Wire.PROC_INPUT, new Wire.Out().u32(pid).bytes(chunk).toBytes(), STDIN_ANSWER);
      off += n;
    } while (off < data.length);
  }

  /** Closes a process's stdin once what was written before has reached it. */
  public void closeStdin(long pid) throws IOException {
    call(Wire.PROC_CLOSE_STDIN, new Wire.Out().u32(pid).toBytes(), STDIN_ANSWER);
  }

  /**
   * Sends a signal to a process, or to its whole process group (every process it started that
   * did not leave the group).
   */
  public void signal(long pid, int signal, boolean group) throws IOException {
    call(Wire.PROC_SIGNAL, new Wire.Out().u32(pid).u32(signal).u8(group ? 1 : 0).toBytes(), ANSWER);
  }

  /** Resizes a process's PTY. */
  public void resize(long pid, int cols, int rows) throws IOException {
    call(Wire.PROC_RESIZE, new Wire.Out().u32(pid).u16(cols).u16(rows).toBytes(), ANSWER);
  }

  private static byte[] pathUser(String path, @Nullable String user) throws DaemonException {
    return new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).toBytes();
  }

  /** A path or name the host sends: at most {@link Wire#MAX_NAME} bytes, as any answer naming it must be. */
  static String checked(String name) throws DaemonException {
    if (name.length() > Wire.MAX_NAME / 3 && name.getBytes(StandardCharsets.UTF_8).length > Wire.MAX_NAME) {
      throw new DaemonException(DaemonException.Kind.INVALID, "a path or name longer than " + Wire.MAX_NAME + " bytes");
    }
    return name;
  }

  /** A call answered by exactly one entry. */
  private EntryInfo entryCall(int type, byte[] payload, Duration timeout) throws IOException {
    return call(type, payload, Wire.ENTRY, EntryInfo::read, 1, true, timeout).get(0);
  }

  /** The entry at a path (not following a final symlink). */
  public EntryInfo stat(String path, @Nullable String user) throws IOException {
    return entryCall(Wire.FILE_STAT, pathUser(path, user), ANSWER);
  }

  /**
   * A folder's entries down to {@code depth} levels: depth first, each folder's names in byte
   * order (so a folder comes right before what it holds).
   */
  public List<EntryInfo> list(String path, @Nullable String user, int depth) throws IOException {
    byte[] p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).u32(depth).toBytes();
    List<EntryInfo> out = new ArrayList<>();
    out.addAll(call(Wire.FILE_LIST, p, Wire.ENTRY, EntryInfo::read, MAX_LIST_ITEMS, false, LONG_ANSWER));
    return out;
  }

  /** {@code mkdir -p}; fails with EXISTS when the folder is already there. */
  public EntryInfo makeDirs(String path, @Nullable String user) throws IOException {
    return entryCall(Wire.FILE_MKDIR, pathUser(path, user), ANSWER);
  }

  /** Removes a file or a whole tree (symlinks are removed, not followed); NOT_FOUND when absent. */
  public void remove(String path, @Nullable String user) throws IOException {
    call(Wire.FILE_REMOVE, pathUser(path, user), LONG_ANSWER);
  }

  /** {@code rename(2)}: the entry now at the destination. */
  public EntryInfo rename(String source, String destination, @Nullable String user) throws IOException {
    byte[] p = new Wire.Out().str(checked(source)).str(checked(destination)).str(user == null ? "" : checked(user)).toBytes();
    return entryCall(Wire.FILE_RENAME, p, ANSWER);
  }

  /** Extended attributes of a path whose names start with {@code prefix}, by full name. */
  public Map<String, byte[]> xattrs(String path, @Nullable String user, String prefix) throws IOException {
    byte[] p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).str(prefix).toBytes();
    return call(Wire.XATTR_GET, p, Wire.XATTRS, EntryInfo::readPairs, 1, true, ANSWER).get(0);
  }

  /**
   * Replaces every extended attribute under {@code prefix} (which must start with
   * {@code user.}) by the given ones, named in full.
   */
  public void setXattrs(String path, @Nullable String user, String prefix, Map<String, byte[]> attrs) throws IOException {
    Wire.Out p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).str(prefix).u32(attrs.size());
    attrs.forEach((k, v) -> p.str(k).bytes(v));
    call(Wire.XATTR_SET, p.toBytes(), ANSWER);
  }

  /** Opens a regular file for reading; the stream knows the file's entry before its first byte. */
  public FileRead readFile(String path, @Nullable String user) throws IOException {
    FileRead r = new FileRead(this);
    int stream = register(r);
    r.bind(stream);
    try {
      send(Wire.FILE_READ, 0, stream, pathUser(path, user));
      r.opened();
      await(r.entry, stream, ANSWER);
    } catch (IOException | RuntimeException e) {
      r.close();
      throw e;
    }
    return r;
  }

  /**
   * Writes a file atomically: the daemon writes a temporary file beside the target (creating
   * missing parents as the user), syncs it and renames it over the target only once every byte
   * arrived. When {@code content} throws, the write is abandoned and the target is left as it was;
   * the exception is rethrown as it is.
   *
   * @param metadata envd's file metadata to store (as {@code user.e2b.*} attributes, replacing
   *     any the file had), or null to keep the old file's attributes
   * @return the written file's entry
   */
  public EntryInfo writeFile(String path, @Nullable String user, InputStream content, @Nullable Map<String, String> metadata)
      throws IOException {
    Wire.Out p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).u8(metadata == null ? 0 : 1)
        .u32(metadata == null ? 0 : metadata.size());
    if (metadata != null) {
      metadata.forEach((k, v) -> p.str(EntryInfo.METADATA_PREFIX + k).bytes(v.getBytes(StandardCharsets.UTF_8)));
    }
    FileWrite w = new FileWrite(this);
    int stream = register(w);
    w.stream = stream;
    send(Wire.FILE_WRITE, 0, stream, p.toBytes());
    byte[] buf = new byte[CHUNK];
    try {
      while (true) {
        int n;
        try {
          n = content.readNBytes(buf, 0, buf.length);
        } catch (IOException | RuntimeException e) {
          cancel(stream);
          throw e;
        }
        if (!w.take(n, ANSWER)) {
          break; // the daemon already answered (an error): no use sending more
        }
        send(Wire.FILE_DATA, n < buf.length ? Wire.FLAG_FIN : 0, stream, buf, 0, n);
        if (n < buf.length) {
          break;
        }
      }
    } catch (InterruptedIOException e) {
      cancel(stream);
      throw e;
    } catch (DaemonException e) {
      cancel(stream);
      throw e;
    }
    return await(w.done, stream, LONG_ANSWER);
  }

  /**
   * Connects to a TCP port on the sandbox's own loopback (127.0.0.1, or ::1 when IPv4 is
   * refused), as the daemon (root in the sandbox) does.
   *
   * @param port 1 to 65535
   * @throws DaemonException kind {@link DaemonException.Kind#REFUSED} when nothing listens there
   * @throws IllegalArgumentException for a port out of range
   */
  public PortStream connectPort(int port) throws IOException {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    PortStream ps = new PortStream(this);
    int stream = register(ps);
    ps.bind(stream);
    try {
      send(Wire.TCP_CONNECT, 0, stream, new Wire.Out().u16(port).toBytes());
      ps.opened();
      await(ps.connected, stream, ANSWER);
    } catch (IOException | RuntimeException e) {
      ps.close();
      throw e;
    }
    return ps;
  }

  /** Watches a folder (and, when recursive, the folders below it) for changes. */
  public DaemonWatch watch(String path, @Nullable String user, boolean recursive) throws IOException {
    DaemonWatch w = new DaemonWatch(this);
    int stream = register(w);
    w.bind(stream);
    try {
      send(Wire.WATCH, 0, stream, new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).u8(recursive ? 1 : 0).toBytes());
      w.opened();
      await(w.ready, stream, LONG_ANSWER);
    } catch (IOException | RuntimeException e) {
      w.close();
      throw e;
    }
    return w;
  }
}
