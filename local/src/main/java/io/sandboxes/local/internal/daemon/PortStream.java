package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A TCP connection the daemon made to a port on its sandbox's loopback, relayed over the daemon
 * connection. Both directions are credit-controlled: what comes from the port waits here (at most
 * {@link Wire#WINDOW} bytes) until {@link #read()} takes it, and {@link #write} waits for the
 * daemon to have written earlier bytes to the port before it sends more than a window. Each
 * direction half-closes on its own; the stream is over once both have (see {@link #awaitEnd()}),
 * or when the connection fails. Closing it early closes the connection inside the sandbox.
 */
public final class PortStream implements FrameChannel.Sink, AutoCloseable {
  private final FrameChannel conn;
  private final Flow<byte[]> incoming;
  final CompletableFuture<Integer> connected = new CompletableFuture<>();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private long credit = Wire.WINDOW; // bytes the host may still send; guarded by this
  private boolean finSent; // guarded by this
  private boolean finReceived; // reader thread only
  int stream;

  PortStream(FrameChannel conn) {
    this.conn = conn;
    this.incoming = new Flow<>(conn);
  }

  void bind(int id) {
    this.stream = id;
    incoming.stream = id;
  }

  /** The request is sent: the stream's window may grow. */
  void opened() {
    incoming.open();
  }

  /** Which loopback address the daemon reached the port on: 4 for 127.0.0.1, 6 for ::1. */
  public int family() {
    return connected.join();
  }

  /**
   * The next bytes from the port, waiting for them; null once the port has closed its sending
   * side.
   *
   * @throws DaemonException when the connection failed (reset, or the daemon connection ended)
   */
  public byte @Nullable [] read() throws IOException {
    return incoming.next(null);
  }

  /** Sends bytes to the port, waiting while the daemon holds a window of them unwritten. */
  public void write(byte[] b) throws IOException {
    write(b, 0, b.length);
  }

  /** Sends bytes to the port, waiting while the daemon holds a window of them unwritten. */
  public void write(byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    while (len > 0) {
      int n;
      synchronized (this) {
        if (finSent) {
          throw new IOException("the sending side is closed");
        }
        long deadline = System.nanoTime() + DaemonConnection.LONG_ANSWER.toNanos();
        while (credit == 0 && !done.isDone()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new DaemonException(DaemonException.Kind.TIMEOUT, "the port inside the sandbox took nothing for "
                + DaemonConnection.LONG_ANSWER.toSeconds() + " s");
          }
          try {
            java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while sending to the sandbox");
          }
        }
        if (done.isDone()) {
          throw ended();
        }
        n = (int) Math.min(Math.min(credit, len), DaemonConnection.CHUNK);
        credit -= n;
      }
      conn.send(Wire.TCP_SEND, 0, stream, b, off, n);
      off += n;
      len -= n;
    }
  }

  /** Half-closes the connection: the port reads its end of stream once the bytes before it. */
  public void shutdownOutput() throws IOException {
    synchronized (this) {
      if (finSent || done.isDone()) {
        return;
      }
      finSent = true;
    }
    conn.send(Wire.TCP_SEND, Wire.FLAG_FIN, stream, new byte[0]);
  }

  /**
   * Waits until both directions have closed.
   *
   * @throws DaemonException when the connection failed instead
   */
  public void awaitEnd() throws IOException {
    conn.await(done, stream, DaemonConnection.LONG_ANSWER);
  }

  private IOException ended() {
    try {
      done.join();
      return new IOException("the connection inside the sandbox has ended");
    } catch (java.util.concurrent.CompletionException e) {
      return e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    }
  }

  /** Closes the connection inside the sandbox at once, if it is still open. */
  @Override
  public void close() {
    if (!done.isDone()) {
      conn.cancel(stream);
      DaemonException closed = new DaemonException(DaemonException.Kind.DISCONNECTED, "closed");
      connected.completeExceptionally(closed);
      done.completeExceptionally(closed);
      synchronized (this) {
        notifyAll();
      }
    }
    incoming.close();
  }

  @Override
  public void frame(Frame f) throws ProtocolException {
    switch (f.type()) {
      case Wire.TCP_CONNECTED -> {
        Wire.In p = new Wire.In(f.payload());
        int family = p.u8();
        p.end();
        if (connected.isDone() || (family != 4 && family != 6)) {
          throw new ProtocolException("a bad or second TCP_CONNECTED");
        }
        connected.complete(family);
      }
      case Wire.TCP_DATA -> {
        if (!connected.isDone() || finReceived) {
          throw new ProtocolException("TCP data before the connection or after its end");
        }
        if (f.payload().length > 0) {
          incoming.deliver(f.payload(), f.payload().length);
        }
        if ((f.flags() & Wire.FLAG_FIN) != 0) {
          finReceived = true;
          incoming.end();
        }
      }
      case Wire.DCREDIT -> {
        Wire.In p = new Wire.In(f.payload());
        long n = p.u32();
        p.end();
        synchronized (this) {
          credit += n;
          if (credit > Wire.WINDOW) {
            throw new ProtocolException("a daemon returned more credit than it was given");
          }
          notifyAll();
        }
      }
      case Wire.OK -> {
        if (!finReceived || !connected.isDone()) {
          throw new ProtocolException("a TCP stream ended before the port's end of stream");
        }
        conn.forget(stream);
        done.complete(null);
        synchronized (this) {
          notifyAll();
        }
      }
      case Wire.ERROR -> {
        DaemonException e = FrameChannel.error(f);
        conn.forget(stream);
        fail(e);
      }
      default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a TCP stream");
    }
  }

  private void fail(DaemonException e) {
    if (!connected.completeExceptionally(e)) {
      incoming.fail(e);
    }
    done.completeExceptionally(e);
    synchronized (this) {
      notifyAll();
    }
  }

  @Override
  public void closed(DaemonException e) {
    fail(e);
  }
}
