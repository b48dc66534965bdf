package io.sandboxes.local.internal.daemon;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
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
  /** Most items (entries, processes) one call collects before it gives up. */
  static final int MAX_ITEMS = 200_000;
  /** Most payload bytes one call collects before it gives up. */
  static final long MAX_CALL_BYTES = 64L << 20;

  /** What the daemon said when it connected. */
  public record Hello(long workerPid, long generation) {}

  private final SocketChannel channel;
  private final InputStream in;
  private final Hello hello;
  private final Map<Integer, Sink> streams = new ConcurrentHashMap<>();
  private final AtomicInteger nextStream = new AtomicInteger(1);
  private final Object writeLock = new Object();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile @Nullable String closeReason;
  private @Nullable Thread reader;

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
    long maxPayload = p.u32();
    long window = p.u32();
    p.end();
    if (version != Wire.VERSION || maxPayload != Wire.MAX_PAYLOAD || window != Wire.WINDOW) {
      throw new ProtocolException("a daemon of protocol " + version + " (frames " + maxPayload + ", window " + window
          + "); this host speaks " + Wire.VERSION);
    }
    DaemonConnection c = new DaemonConnection(channel, in, new Hello(pid, generation));
    c.reader = Thread.ofVirtual().name("sandboxes-daemon-reader").start(c::readLoop);
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
      while ((f = Frame.read(in)) != null) {
        if (f.stream() == 0) {
          throw new ProtocolException("a frame on stream 0 after HELLO");
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
      LOG.warn("dropping a sandbox daemon's connection: {}", e.getMessage());
    } catch (IOException e) {
      reason = closeReason != null ? closeReason : "read failed: " + e.getMessage();
    } catch (RuntimeException e) {
      reason = "host error: " + e;
      LOG.warn("dropping a sandbox daemon's connection after a host error", e);
    } finally {
      shut(reason);
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
      try {
        while (bufs[1].hasRemaining() || h.hasRemaining()) {
          channel.write(bufs);
        }
      } catch (IOException e) {
        shut("write failed: " + e.getMessage());
        throw disconnected();
      }
    }
  }

  private DaemonException disconnected() {
    return new DaemonException(DaemonException.Kind.DISCONNECTED, "the sandbox daemon's connection ended: " + closeReason);
  }

  int register(Sink sink) throws DaemonException {
    int id = nextStream.getAndIncrement();
    if (id <= 0) {
      shut("stream ids exhausted");
    }
    streams.put(id, sink);
    if (!isOpen()) {
      streams.remove(id);
      throw disconnected();
    }
    return id;
  }

  void forget(int stream) {
    streams.remove(stream);
  }

  /** Ends a stream from the host side: the daemon stops sending on it. */
  void cancel(int stream) {
    streams.remove(stream);
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
    String message = p.str();
    p.end();
    return new DaemonException(DaemonException.Kind.of(kind), errno, message);
  }

  /** A call answered by items and then OK, or by ERROR. */
  private final class Call implements Sink {
    final Set<Integer> itemTypes;
    final List<Frame> items = new ArrayList<>();
    final CompletableFuture<List<Frame>> done = new CompletableFuture<>();
    long bytes;
    int stream;

    Call(Set<Integer> itemTypes) {
      this.itemTypes = itemTypes;
    }

    @Override
    public void frame(Frame f) throws ProtocolException {
      if (f.type() == Wire.OK) {
        forget(stream);
        done.complete(items);
      } else if (f.type() == Wire.ERROR) {
        DaemonException e = error(f);
        forget(stream);
        done.completeExceptionally(e);
      } else if (itemTypes.contains(f.type())) {
        bytes += f.payload().length;
        if (items.size() >= MAX_ITEMS || bytes > MAX_CALL_BYTES) {
          cancel(stream);
          done.completeExceptionally(new DaemonException(DaemonException.Kind.TOO_LARGE,
              "the answer has more than " + MAX_ITEMS + " items or " + MAX_CALL_BYTES + " bytes"));
          return;
        }
        items.add(f);
      } else {
        throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " in answer to a call");
      }
    }

    @Override
    public void closed(DaemonException e) {
      done.completeExceptionally(e);
    }
  }

  /** Sends one request and waits for its items and OK. */
  List<Frame> call(int type, byte[] payload, Set<Integer> itemTypes) throws IOException {
    Call c = new Call(itemTypes);
    c.stream = register(c);
    send(type, 0, c.stream, payload);
    return await(c.done, c.stream);
  }

  <T> T await(CompletableFuture<T> f, int stream) throws IOException {
    try {
      return f.get();
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
    call(Wire.PING, new byte[0], Set.of());
  }

  /**
   * Starts a process. Its output is delivered to the handle, which owns the only attachment of
   * this connection to it until closed.
   */
  public DaemonProcess start(ProcessSpec spec) throws IOException {
    Wire.Out p = new Wire.Out().strs(spec.argv());
    List<String> env = new ArrayList<>();
    spec.env().forEach((k, v) -> env.add(k + "=" + v));
    p.strs(env).str(spec.cwd() == null ? "" : spec.cwd()).str(spec.user() == null ? "" : spec.user())
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
    send(type, 0, stream, payload);
    await(proc.started, stream);
    return proc;
  }

  /** The daemon's running processes. */
  public List<ProcessInfo> processes() throws IOException {
    List<ProcessInfo> out = new ArrayList<>();
    for (Frame f : call(Wire.PROC_LIST, new byte[0], Set.of(Wire.PROC_INFO))) {
      Wire.In p = new Wire.In(f.payload());
      long pid = p.u32();
      String tag = p.str();
      int flags = p.u8();
      List<String> argv = p.strs();
      List<String> env = p.strs();
      String cwd = p.str();
      p.end();
      out.add(new ProcessInfo(pid, tag.isEmpty() ? null : tag, (flags & 1) != 0, (flags & 2) != 0, argv, env, cwd));
    }
    return out;
  }

  /** Writes to a process's stdin (or its PTY); returns once the bytes are in the pipe. */
  public void writeStdin(long pid, byte[] data) throws IOException {
    int off = 0;
    do {
      int n = Math.min(CHUNK, data.length - off);
      byte[] chunk = java.util.Arrays.copyOfRange(data, off, off + n);
      call(Wire.PROC_INPUT, new Wire.Out().u32(pid).bytes(chunk).toBytes(), Set.of());
      off += n;
    } while (off < data.length);
  }

  /** Closes a process's stdin once what was written before has reached it. */
  public void closeStdin(long pid) throws IOException {
    call(Wire.PROC_CLOSE_STDIN, new Wire.Out().u32(pid).toBytes(), Set.of());
  }

  /**
   * Sends a signal to a process, or to its whole process group (every process it started that
   * did not leave the group).
   */
  public void signal(long pid, int signal, boolean group) throws IOException {
    call(Wire.PROC_SIGNAL, new Wire.Out().u32(pid).u32(signal).u8(group ? 1 : 0).toBytes(), Set.of());
  }

  /** Resizes a process's PTY. */
  public void resize(long pid, int cols, int rows) throws IOException {
    call(Wire.PROC_RESIZE, new Wire.Out().u32(pid).u16(cols).u16(rows).toBytes(), Set.of());
  }

  private static byte[] pathUser(String path, @Nullable String user) {
    return new Wire.Out().str(path).str(user == null ? "" : user).toBytes();
  }

  private static EntryInfo one(List<Frame> items) throws ProtocolException {
    if (items.size() != 1) {
      throw new ProtocolException(items.size() + " entries where one was expected");
    }
    return EntryInfo.read(new Wire.In(items.get(0).payload()));
  }

  /** The entry at a path (not following a final symlink). */
  public EntryInfo stat(String path, @Nullable String user) throws IOException {
    return one(call(Wire.FILE_STAT, pathUser(path, user), Set.of(Wire.ENTRY)));
  }

  /**
   * A folder's entries down to {@code depth} levels: depth first, each folder's names in byte
   * order (so a folder comes right before what it holds).
   */
  public List<EntryInfo> list(String path, @Nullable String user, int depth) throws IOException {
    byte[] p = new Wire.Out().str(path).str(user == null ? "" : user).u32(depth).toBytes();
    List<EntryInfo> out = new ArrayList<>();
    for (Frame f : call(Wire.FILE_LIST, p, Set.of(Wire.ENTRY))) {
      out.add(EntryInfo.read(new Wire.In(f.payload())));
    }
    return out;
  }

  /** {@code mkdir -p}; fails with EXISTS when the folder is already there. */
  public EntryInfo makeDirs(String path, @Nullable String user) throws IOException {
    return one(call(Wire.FILE_MKDIR, pathUser(path, user), Set.of(Wire.ENTRY)));
  }

  /** Removes a file or a whole tree (symlinks are removed, not followed); NOT_FOUND when absent. */
  public void remove(String path, @Nullable String user) throws IOException {
    call(Wire.FILE_REMOVE, pathUser(path, user), Set.of());
  }

  /** {@code rename(2)}: the entry now at the destination. */
  public EntryInfo rename(String source, String destination, @Nullable String user) throws IOException {
    byte[] p = new Wire.Out().str(source).str(destination).str(user == null ? "" : user).toBytes();
    return one(call(Wire.FILE_RENAME, p, Set.of(Wire.ENTRY)));
  }

  /** Extended attributes of a path whose names start with {@code prefix}, by full name. */
  public Map<String, byte[]> xattrs(String path, @Nullable String user, String prefix) throws IOException {
    byte[] p = new Wire.Out().str(path).str(user == null ? "" : user).str(prefix).toBytes();
    List<Frame> items = call(Wire.XATTR_GET, p, Set.of(Wire.XATTRS));
    if (items.size() != 1) {
      throw new ProtocolException(items.size() + " attribute sets where one was expected");
    }
    Wire.In in = new Wire.In(items.get(0).payload());
    Map<String, byte[]> out = EntryInfo.readPairs(in);
    in.end();
    return out;
  }

  /**
   * Replaces every extended attribute under {@code prefix} (which must start with
   * {@code user.}) by the given ones, named in full.
   */
  public void setXattrs(String path, @Nullable String user, String prefix, Map<String, byte[]> attrs) throws IOException {
    Wire.Out p = new Wire.Out().str(path).str(user == null ? "" : user).str(prefix).u32(attrs.size());
    attrs.forEach((k, v) -> p.str(k).bytes(v));
    call(Wire.XATTR_SET, p.toBytes(), Set.of());
  }

  /** Opens a regular file for reading; the stream knows the file's entry before its first byte. */
  public FileRead readFile(String path, @Nullable String user) throws IOException {
    FileRead r = new FileRead(this);
    int stream = register(r);
    r.bind(stream);
    send(Wire.FILE_READ, 0, stream, pathUser(path, user));
    await(r.entry, stream);
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
    Wire.Out p = new Wire.Out().str(path).str(user == null ? "" : user).u8(metadata == null ? 0 : 1)
        .u32(metadata == null ? 0 : metadata.size());
    if (metadata != null) {
      metadata.forEach((k, v) -> p.str(EntryInfo.METADATA_PREFIX + k).bytes(v.getBytes(StandardCharsets.UTF_8)));
    }
    FileWrite w = new FileWrite();
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
        if (!w.take(n)) {
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
    }
    return one(await(w.done, stream));
  }

  /** A write stream's receiving end: credit back from the daemon, then the entry and OK. */
  private final class FileWrite implements Sink {
    final CompletableFuture<List<Frame>> done = new CompletableFuture<>();
    final List<Frame> items = new ArrayList<>();
    long credit = Wire.WINDOW;
    int stream;

    @Override
    public synchronized void frame(Frame f) throws ProtocolException {
      switch (f.type()) {
        case Wire.DCREDIT -> {
          Wire.In p = new Wire.In(f.payload());
          credit += p.u32();
          p.end();
          if (credit > Wire.WINDOW) {
            throw new ProtocolException("a daemon returned more credit than it was given");
          }
          notifyAll();
        }
        case Wire.ENTRY -> items.add(f);
        case Wire.OK -> {
          forget(stream);
          done.complete(items);
          notifyAll();
        }
        case Wire.ERROR -> {
          DaemonException e = error(f);
          forget(stream);
          done.completeExceptionally(e);
          notifyAll();
        }
        default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a write");
      }
    }

    @Override
    public synchronized void closed(DaemonException e) {
      done.completeExceptionally(e);
      notifyAll();
    }

    /** Waits for credit for n more bytes; false once the write has been answered. */
    synchronized boolean take(int n) throws InterruptedIOException {
      while (!done.isDone() && credit < n) {
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while writing to the sandbox");
        }
      }
      if (done.isDone()) {
        return false;
      }
      credit -= n;
      return true;
    }
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
    send(Wire.TCP_CONNECT, 0, stream, new Wire.Out().u16(port).toBytes());
    await(ps.connected, stream);
    return ps;
  }

  /** Watches a folder (and, when recursive, the folders below it) for changes. */
  public DaemonWatch watch(String path, @Nullable String user, boolean recursive) throws IOException {
    DaemonWatch w = new DaemonWatch(this);
    int stream = register(w);
    w.bind(stream);
    send(Wire.WATCH, 0, stream, new Wire.Out().str(path).str(user == null ? "" : user).u8(recursive ? 1 : 0).toBytes());
    await(w.ready, stream);
    return w;
  }
}
