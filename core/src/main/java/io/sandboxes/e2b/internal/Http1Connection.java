package io.sandboxes.e2b.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One kept-alive connection of {@link Http1}: its socket, the bytes read from it not yet taken, and
 * the framing of an answer's body read from it ({@link Body}). Used by one call at a time; a body
 * read to its end gives the connection back to its pool.
 */
final class Http1Connection {
  private static final int MAX_LINE = 16 * 1024;
  /** The end of a chunked body as servers send it: the last chunk's CRLF, a chunk of size 0, no trailers. */
  static final byte[] LAST_CHUNK = "\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
  /** The longest the next call waits for the end of a body whose content was read before it came (a server's second write). */
  static final long OWED_WAIT_MILLIS = 200;

  /** The server this connection is to ({@code host:port}): its pool's key. */
  final String key;
  /** Takes the connection back once an answer's body has been read to its end. */
  private final Consumer<Http1Connection> pool;
  final SocketChannel channel;
  final Socket socket;
  final InputStream in;
  final OutputStream out;
  final byte[] buf = new byte[16 * 1024];
  int pos;
  int lim;
  long idleSince;
  long deadline;
  /**
   * Whether the last answer's body still owes its last chunk: its content was read to its end
   * (a Connect stream's end message) before the server's write of the chunk that ends the body
   * arrived. Whoever takes the connection next reads that chunk first ({@link #alive}).
   */
  boolean owesLastChunk;

  Http1Connection(String key, SocketChannel channel, Consumer<Http1Connection> pool) throws IOException {
    this.key = key;
    this.pool = pool;
    this.channel = channel;
    this.socket = channel.socket();
    this.in = socket.getInputStream();
    this.out = new java.io.BufferedOutputStream(socket.getOutputStream(), 8 * 1024);
  }

  /** Until when reads wait (0: for ever). */
  void timeout(long deadline) {
    this.deadline = deadline;
  }

  /** Reads more into the buffer. @return false at the end of the connection */
  boolean fill() throws IOException {
    int wait = 0;
    if (deadline != 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new SocketTimeoutException("no answer in time");
      }
      wait = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left)));
    }
    socket.setSoTimeout(wait);
    pos = 0;
    lim = 0;
    int n = readBlocking();
    if (n <= 0) {
      return false;
    }
    lim = n;
    return true;
  }

  /**
   * Reads from the socket, waiting as long as it takes. A worker of a {@link
   * java.util.concurrent.ForkJoinPool} (the common pool runs {@code supplyAsync} and parallel
   * streams) tells its pool it blocks, so the pool can go on with its other tasks on another
   * thread, as it does for the JDK's own blocking waits: with a pool of one worker on a two-core
   * machine, two calls made from it would otherwise run one after the other.
   */
  private int readBlocking() throws IOException {
    if (!(Thread.currentThread() instanceof java.util.concurrent.ForkJoinWorkerThread)) {
      return in.read(buf);
    }
    final class Read implements java.util.concurrent.ForkJoinPool.ManagedBlocker {
      boolean done;
      int n;
      @Nullable IOException failed;

      @Override
      public boolean block() {
        try {
          n = in.read(buf);
        } catch (IOException e) {
          failed = e;
        }
        done = true;
        return true;
      }

      @Override
      public boolean isReleasable() {
        return done;
      }
    }
    Read r = new Read();
    try {
      java.util.concurrent.ForkJoinPool.managedBlock(r);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while waiting for the answer");
    }
    if (r.failed != null) {
      throw r.failed;
    }
    return r.n;
  }

  /**
   * A line without its CRLF.
   *
   * @param first whether it is the answer's first: an end or a reset before any of it is {@link Stale}
   */
  String line(boolean first) throws IOException {
    StringBuilder s = new StringBuilder(64);
    while (true) {
      if (pos == lim) {
        boolean more;
        try {
          more = fill();
        } catch (java.net.SocketException e) {
          if (first && s.isEmpty() && !Thread.currentThread().isInterrupted()) {
            throw new Stale(e);
          }
          throw e;
        }
        if (!more) {
          EOFException end = new EOFException("the server closed the connection");
          if (first && s.isEmpty()) {
            throw new Stale(end);
          }
          throw end;
        }
      }
      byte b = buf[pos++];
      if (b == '\n') {
        int len = s.length();
        if (len > 0 && s.charAt(len - 1) == '\r') {
          s.setLength(len - 1);
        }
        return s.toString();
      }
      if (s.length() >= MAX_LINE) {
        throw new IOException("a line of the answer's head is longer than " + MAX_LINE + " bytes");
      }
      s.append((char) (b & 0xff));
    }
  }

  /**
   * Whether the server has not closed it (nor sent anything unasked) while it was idle; the last
   * chunk an earlier answer {@linkplain #owesLastChunk owed} is read first, waiting for it at most
   * {@link #OWED_WAIT_MILLIS}.
   */
  boolean alive() {
    try {
      if (owesLastChunk && !takeOwedLastChunk()) {
        return false;
      }
      return pos == lim && arrived(ByteBuffer.allocate(1)) == 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** @return whether the buffer now holds, or the connection has waiting, the start of {@link #LAST_CHUNK} and nothing else */
  boolean lastChunkPrefixBuffered() throws IOException {
    compact();
    if (lim - pos < LAST_CHUNK.length) {
      int n = arrived(ByteBuffer.wrap(buf, lim, buf.length - lim));
      if (n < 0) {
        return false;
      }
      lim += n;
    }
    int have = lim - pos;
    return have <= LAST_CHUNK.length && java.util.Arrays.equals(buf, pos, lim, LAST_CHUNK, 0, have);
  }

  private boolean takeOwedLastChunk() throws IOException {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(OWED_WAIT_MILLIS);
    while (lastChunkPrefixBuffered()) {
      if (lim - pos == LAST_CHUNK.length) {
        pos = lim;
        owesLastChunk = false;
        return true;
      }
      long left = until - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      int n;
      try {
        n = in.read(buf, lim, buf.length - lim);
      } catch (SocketTimeoutException e) {
        return false;
      }
      if (n < 0) {
        return false;
      }
      lim += n;
    }
    return false;
  }

  /** Moves the bytes not yet taken to the buffer's start. */
  private void compact() {
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos);
      lim -= pos;
      pos = 0;
    }
  }

  /** Reads what has arrived already, waiting for nothing. @return bytes read, or -1 at the connection's end */
  int arrived(ByteBuffer into) throws IOException {
    channel.configureBlocking(false);
    try {
      return channel.read(into);
    } finally {
      channel.configureBlocking(true);
    }
  }

  void discard() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // gone either way
    }
  }

  /** The server closed a connection taken from the pool before anything of the answer came. */
  static final class Stale extends IOException {
    private static final long serialVersionUID = 1L;

    Stale(IOException cause) {
      super(cause);
    }
  }

  /**
   * An answer's body: a fixed length, chunks, or the rest of the connection. Read to its end, its
   * connection goes back to the pool; closed before, the connection is closed (from any thread:
   * a read blocked on it then fails).
   */
  static final class Body extends InputStream {
    private final Http1Connection c;
    private final boolean chunked;
    private final boolean keep;
    /** Bytes left of the body (fixed length) or of the current chunk; -1 for a body that ends with the connection. */
    private long left;
    /** Whether a chunked body's first chunk has been read (each later one follows a CRLF). */
    private boolean startedChunks;
    private boolean ended;
    private final AtomicBoolean settled = new AtomicBoolean();
    /** Held while this body is read: a close from another thread meanwhile closes the connection, reading nothing. */
    private final java.util.concurrent.locks.ReentrantLock reading = new java.util.concurrent.locks.ReentrantLock();

    Body(Http1Connection c, long length, boolean chunked, boolean keep) {
      this.c = c;
      this.chunked = chunked;
      this.keep = keep;
      this.left = chunked ? 0 : length;
      if (!chunked && length == 0) {
        end();
      }
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      java.util.Objects.checkFromIndexSize(off, len, b.length);
      reading.lock();
      try {
        return readLocked(b, off, len);
      } finally {
        reading.unlock();
      }
    }

    private int readLocked(byte[] b, int off, int len) throws IOException {
      if (ended) {
        return -1;
      }
      if (settled.get()) {
        throw new IOException("closed");
      }
      if (len == 0) {
        return 0;
      }
      if (chunked && left == 0 && !nextChunk()) {
        return -1;
      }
      if (c.pos == c.lim && !c.fill()) {
        if (!chunked && left < 0) {
          end();
          return -1;
        }
        throw new EOFException("the server closed the connection in the middle of the answer's body");
      }
      int n = c.lim - c.pos;
      n = Math.min(n, len);
      if (left >= 0) {
        n = (int) Math.min(n, left);
      }
      System.arraycopy(c.buf, c.pos, b, off, n);
      c.pos += n;
      if (left > 0) {
        left -= n;
        if (left == 0 && !chunked) {
          end();
        }
      }
      return n;
    }

    /** Reads the next chunk's size. @return false at the last chunk (trailers read, the body ended) */
    private boolean nextChunk() throws IOException {
      if (startedChunks) {
        String crlf = c.line(false);
        if (!crlf.isEmpty()) {
          throw new IOException("a chunk not followed by CRLF");
        }
      }
      startedChunks = true;
      String size = c.line(false);
      int semi = size.indexOf(';');
      long n;
      try {
        n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).strip(), 16);
      } catch (NumberFormatException e) {
        throw new IOException("a malformed chunk size: " + Json.abbreviate(size));
      }
      if (n < 0) {
        throw new IOException("a negative chunk size");
      }
      if (n == 0) {
        for (String trailer = c.line(false); !trailer.isEmpty(); trailer = c.line(false)) {
          // trailers carry nothing this client reads
        }
        end();
        return false;
      }
      left = n;
      return true;
    }

    @Override
    public int available() {
      return ended || settled.get() ? 0 : (int) Math.min(c.lim - c.pos, left < 0 ? Integer.MAX_VALUE : left);
    }

    private void end() {
      ended = true;
      if (settled.compareAndSet(false, true)) {
        if (keep && c.pos == c.lim) {
          c.pool.accept(c);
        } else {
          c.discard();
        }
      }
    }

    /**
     * Closes the body. A reader that stops at a chunk's end (a Connect stream stops after its end
     * message) has left only the body's last chunk unread: when that has arrived, it is taken and
     * the connection goes back to the pool; otherwise, and while another thread reads, the
     * connection is closed.
     */
    @Override
    public void close() {
      close(false);
    }

    /**
     * Closes a body whose reader read its content to the end (a Connect stream's end message): as
     * {@link #close()}, but when the chunk that ends the body has not arrived yet (servers write it
     * after the content), the connection still goes back to the pool, {@linkplain
     * Http1Connection#owesLastChunk owing} that chunk to whoever takes it next.
     */
    void closeAtContentEnd() {
      close(true);
    }

    private void close(boolean contentEnded) {
      if (settled.get()) {
        return;
      }
      if (chunked && left == 0 && startedChunks && reading.tryLock()) {
        try {
          if (!settled.get() && c.lastChunkPrefixBuffered()) {
            if (c.lim - c.pos == LAST_CHUNK.length) {
              c.pos = c.lim;
              end();
              return;
            }
            if (contentEnded && keep) {
              c.owesLastChunk = true;
              ended = true;
              if (settled.compareAndSet(false, true)) {
                c.pool.accept(c);
              }
              return;
            }
          }
        } catch (IOException | RuntimeException e) {
          // the connection is closed below
        } finally {
          reading.unlock();
        }
      }
      if (settled.compareAndSet(false, true)) {
        c.discard();
      }
    }
  }
}
