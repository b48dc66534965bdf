package io.sandboxes.local.internal.daemon;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

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

  /** What the daemon said when it connected. */
  public record Hello(long workerPid, long generation, int version) {}

  /**
   * A file system as {@code df} counts it, in bytes, as the daemon read it (code in the sandbox can
   * make its daemon say anything: these are figures about that sandbox only).
   *
   * @param size the whole file system
   * @param used what is in use ({@code size} less the free blocks)
   * @param available what an unprivileged user may still fill
   */
  public record FileSystemInfo(long size, long used, long available) {}

  private final FrameChannel frames;
  private final Hello hello;

  private DaemonConnection(FrameChannel frames, Hello hello) {
    this.frames = frames;
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
    if (version < Wire.OLDEST_VERSION || version > Wire.VERSION) {
      throw new ProtocolException("a daemon of protocol " + version + "; this host speaks " + Wire.OLDEST_VERSION + " to "
          + Wire.VERSION);
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
    DaemonConnection c = new DaemonConnection(new FrameChannel(channel, in), new Hello(pid, generation, version));
    c.frames.start();
    return c;
  }

  /** The daemon's worker pid (in the sandbox), how many workers died before it, and its protocol version. */
  public Hello hello() {
    return hello;
  }

  public boolean isOpen() {
    return frames.isOpen();
  }

  /** Completes when the connection has ended, for whatever reason. */
  public CompletableFuture<Void> closedFuture() {
    return frames.closedFuture();
  }

  /** What this connection makes the host hold, and its bounds. */
  public Budget budget() {
    return frames.budget();
  }

  /** Why the connection ended, or null while it is open. */
  public @Nullable String closeReason() {
    return frames.closeReason();
  }

  @Override
  public void close() {
    frames.close();
  }

  /** The frames under the typed calls, for this package's tests that speak below them. */
  FrameChannel frames() {
    return frames;
  }

  // ---- calls ----

  /** A round trip that does nothing. */
  public void ping() throws IOException {
    ping(ANSWER);
  }

  /** A round trip that does nothing, failing with {@link DaemonException.Kind#TIMEOUT} when it takes longer than {@code timeout}. */
  public void ping(Duration timeout) throws IOException {
    frames.call(Wire.PING, new byte[0], timeout);
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
    DaemonProcess proc = new DaemonProcess(this, frames);
    int stream = frames.register(proc);
    proc.bind(stream);
    try {
      frames.send(type, 0, stream, payload);
      proc.opened();
      frames.await(proc.started, stream, ANSWER);
    } catch (IOException | RuntimeException e) {
      proc.close();
      throw e;
    }
    return proc;
  }

  /** The daemon's running processes. */
  public List<ProcessInfo> processes() throws IOException {
    List<ProcessInfo> out = new ArrayList<>();
    return frames.call(Wire.PROC_LIST, new byte[0], Wire.PROC_INFO, p -> {
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
      frames.call(Wire.PROC_INPUT, new Wire.Out().u32(pid).bytes(chunk).toBytes(), STDIN_ANSWER);
      off += n;
    } while (off < data.length);
  }

  /** Closes a process's stdin once what was written before has reached it. */
  public void closeStdin(long pid) throws IOException {
    frames.call(Wire.PROC_CLOSE_STDIN, new Wire.Out().u32(pid).toBytes(), STDIN_ANSWER);
  }

  /**
   * Sends a signal to a process, or to its whole process group (every process it started that
   * did not leave the group).
   */
  public void signal(long pid, int signal, boolean group) throws IOException {
    frames.call(Wire.PROC_SIGNAL, new Wire.Out().u32(pid).u32(signal).u8(group ? 1 : 0).toBytes(), ANSWER);
  }

  /** Resizes a process's PTY. */
  public void resize(long pid, int cols, int rows) throws IOException {
    frames.call(Wire.PROC_RESIZE, new Wire.Out().u32(pid).u16(cols).u16(rows).toBytes(), ANSWER);
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
    return frames.call(type, payload, Wire.ENTRY, EntryInfo::read, 1, true, timeout).get(0);
  }

  /** The entry at a path (not following a final symlink). */
  public EntryInfo stat(String path, @Nullable String user) throws IOException {
    return entryCall(Wire.FILE_STAT, pathUser(path, user), ANSWER);
  }

  /**
   * The file system holding a path, as {@code statvfs(3)} in the sandbox reads it: no process is
   * started for it, and no call goes through the container engine.
   *
   * @throws DaemonException kind {@link DaemonException.Kind#UNSUPPORTED} from a daemon of protocol
   *     2, which has no such call; {@link DaemonException.Kind#PROTOCOL} for figures no file system
   *     has (a size of 0 or less, a negative use)
   */
  public FileSystemInfo fileSystem(String path, @Nullable String user, Duration timeout) throws IOException {
    if (hello.version() < Wire.FILE_STATFS_SINCE) {
      throw new DaemonException(DaemonException.Kind.UNSUPPORTED, "the sandbox's daemon speaks protocol " + hello.version()
          + ", which cannot read a file system's use (a daemon of " + Wire.FILE_STATFS_SINCE + " or later can)");
    }
    FileSystemInfo fs = frames.call(Wire.FILE_STATFS, pathUser(path, user), Wire.FS_INFO,
        p -> new FileSystemInfo(p.i64(), p.i64(), p.i64()), 1, true, timeout).get(0);
    if (fs.size() <= 0 || fs.used() < 0 || fs.available() < 0) {
      throw new DaemonException(DaemonException.Kind.PROTOCOL,
          "the daemon read a file system of " + fs.size() + " bytes with " + fs.used() + " used and " + fs.available() + " available");
    }
    return fs;
  }

  /**
   * A folder's entries down to {@code depth} levels: depth first, each folder's names in byte
   * order (so a folder comes right before what it holds).
   */
  public List<EntryInfo> list(String path, @Nullable String user, int depth) throws IOException {
    byte[] p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).u32(depth).toBytes();
    List<EntryInfo> out = new ArrayList<>();
    out.addAll(frames.call(Wire.FILE_LIST, p, Wire.ENTRY, EntryInfo::read, MAX_LIST_ITEMS, false, LONG_ANSWER));
    return out;
  }

  /** {@code mkdir -p}; fails with EXISTS when the folder is already there. */
  public EntryInfo makeDirs(String path, @Nullable String user) throws IOException {
    return entryCall(Wire.FILE_MKDIR, pathUser(path, user), ANSWER);
  }

  /** Removes a file or a whole tree (symlinks are removed, not followed); NOT_FOUND when absent. */
  public void remove(String path, @Nullable String user) throws IOException {
    frames.call(Wire.FILE_REMOVE, pathUser(path, user), LONG_ANSWER);
  }

  /** {@code rename(2)}: the entry now at the destination. */
  public EntryInfo rename(String source, String destination, @Nullable String user) throws IOException {
    byte[] p = new Wire.Out().str(checked(source)).str(checked(destination)).str(user == null ? "" : checked(user)).toBytes();
    return entryCall(Wire.FILE_RENAME, p, ANSWER);
  }

  /** Extended attributes of a path whose names start with {@code prefix}, by full name. */
  public Map<String, byte[]> xattrs(String path, @Nullable String user, String prefix) throws IOException {
    byte[] p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).str(prefix).toBytes();
    return frames.call(Wire.XATTR_GET, p, Wire.XATTRS, EntryInfo::readPairs, 1, true, ANSWER).get(0);
  }

  /**
   * Replaces every extended attribute under {@code prefix} (which must start with
   * {@code user.}) by the given ones, named in full.
   */
  public void setXattrs(String path, @Nullable String user, String prefix, Map<String, byte[]> attrs) throws IOException {
    Wire.Out p = new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).str(prefix).u32(attrs.size());
    attrs.forEach((k, v) -> p.str(k).bytes(v));
    frames.call(Wire.XATTR_SET, p.toBytes(), ANSWER);
  }

  /** Opens a regular file for reading; the stream knows the file's entry before its first byte. */
  public FileRead readFile(String path, @Nullable String user) throws IOException {
    FileRead r = new FileRead(frames);
    int stream = frames.register(r);
    r.bind(stream);
    try {
      frames.send(Wire.FILE_READ, 0, stream, pathUser(path, user));
      r.opened();
      frames.await(r.entry, stream, ANSWER);
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
    FileWrite w = new FileWrite(frames);
    int stream = frames.register(w);
    w.stream = stream;
    frames.send(Wire.FILE_WRITE, 0, stream, p.toBytes());
    byte[] buf = new byte[CHUNK];
    try {
      while (true) {
        int n;
        try {
          n = content.readNBytes(buf, 0, buf.length);
        } catch (IOException | RuntimeException e) {
          frames.cancel(stream);
          throw e;
        }
        if (!w.take(n, ANSWER)) {
          break; // the daemon already answered (an error): no use sending more
        }
        frames.send(Wire.FILE_DATA, n < buf.length ? Wire.FLAG_FIN : 0, stream, buf, 0, n);
        if (n < buf.length) {
          break;
        }
      }
    } catch (InterruptedIOException e) {
      frames.cancel(stream);
      throw e;
    } catch (DaemonException e) {
      frames.cancel(stream);
      throw e;
    }
    return frames.await(w.done, stream, LONG_ANSWER);
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
    PortStream ps = new PortStream(frames);
    int stream = frames.register(ps);
    ps.bind(stream);
    try {
      frames.send(Wire.TCP_CONNECT, 0, stream, new Wire.Out().u16(port).toBytes());
      ps.opened();
      frames.await(ps.connected, stream, ANSWER);
    } catch (IOException | RuntimeException e) {
      ps.close();
      throw e;
    }
    return ps;
  }

  /** Watches a folder (and, when recursive, the folders below it) for changes. */
  public DaemonWatch watch(String path, @Nullable String user, boolean recursive) throws IOException {
    DaemonWatch w = new DaemonWatch(frames);
    int stream = frames.register(w);
    w.bind(stream);
    try {
      frames.send(Wire.WATCH, 0, stream, new Wire.Out().str(checked(path)).str(user == null ? "" : checked(user)).u8(recursive ? 1 : 0).toBytes());
      w.opened();
      frames.await(w.ready, stream, LONG_ANSWER);
    } catch (IOException | RuntimeException e) {
      w.close();
      throw e;
    }
    return w;
  }
}
