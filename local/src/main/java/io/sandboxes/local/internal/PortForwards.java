package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.PortStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's ports, reached from this machine (preview URLs, {@code LocalServer.forward}): for
 * each port asked for, a listener on the server's own address, and for each connection to it, a
 * TCP connection that the sandbox's daemon makes to that port on the sandbox's loopback, relayed
 * over the daemon's connection (credit-controlled both ways, each way half-closed on its own).
 * Like {@code kubectl port-forward}: the sandbox needs no network and gains no route out, and the
 * template needs nothing for it (no python, no shell).
 *
 * <p>Listeners cost the host a port and a thread each, so they are made only when an authorised
 * caller asks (the API key holder: requests routed by {@code E2b-Sandbox-Port} are relayed with
 * no listener at all), at most {@link #MAX_PER_SANDBOX} per sandbox and {@link #MAX_PER_SERVER}
 * in this server process, and each closes once nothing has used it for its idle time. They end
 * with the sandbox or the server. A connection to a paused sandbox wakes it as any traffic does
 * ({@link TrafficWake}: {@code autoResume}, a pause that kept its memory), or is closed unanswered.
 */
public final class PortForwards implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PortForwards.class);
  private static final int BUFFER = 64 * 1024;
  /** The most ports one sandbox has forwarded at once. */
  public static final int MAX_PER_SANDBOX = 16;
  /** The most forwarded ports in this server process, every sandbox's together. */
  public static final int MAX_PER_SERVER = 256;
  /** How long a forwarded port stays without a connection before its listener closes, unless the server says otherwise. */
  public static final Duration DEFAULT_IDLE = Duration.ofMinutes(10);
  private static final AtomicInteger SERVER_WIDE = new AtomicInteger();

  /** A forward refused because a bound is reached. */
  public static final class LimitReached extends IOException {
    LimitReached(String message) {
      super(message);
    }
  }

  /** One forwarded port: its listener, and when it was last in use. */
  private static final class Forward {
    final ServerSocket listener;
    final AtomicInteger active = new AtomicInteger();
    volatile long lastUsed = System.nanoTime();
    /** Opens when its accept loop has left: only then is a closed listener's socket really gone. */
    final java.util.concurrent.CountDownLatch acceptEnded = new java.util.concurrent.CountDownLatch(1);

    Forward(ServerSocket listener) {
      this.listener = listener;
    }
  }

  private final LocalSandbox sandbox;
  private final Map<Integer, Forward> listeners = new HashMap<>(); // guarded by this
  private volatile boolean closed;
  /** Wakes the sandbox when a connection arrives while it is paused; set by the first forward. */
  private volatile @org.jspecify.annotations.Nullable TrafficWake wake;

  PortForwards(LocalSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /** How many ports are forwarded now. */
  public synchronized int count() {
    return listeners.size();
  }

  /**
   * The address at which {@code port} inside the sandbox is reached, listening from now on; the
   * same address for every call with the same port while its listener lives.
   *
   * @param bindHost the address to listen on (the server's own)
   * @param idle how long the listener stays without a connection before it closes
   * @param wake wakes the sandbox for a connection that arrives while it is paused, when its lifecycle allows
   * @throws LimitReached when this sandbox or this server has as many forwarded ports as allowed
   */
  public URI forward(int port, String bindHost, Duration idle, TrafficWake wake) throws IOException {
    this.wake = wake;
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    Forward f;
    synchronized (this) {
      if (closed) {
        throw new IOException("sandbox " + sandbox.id() + " is gone");
      }
      f = listeners.get(port);
      if (f == null || f.listener.isClosed()) {
        if (f == null && listeners.size() >= MAX_PER_SANDBOX) {
          throw new LimitReached("sandbox " + sandbox.id() + " already has " + MAX_PER_SANDBOX
              + " forwarded ports, the most it may have; a port unused for " + idle.toMinutes() + " min stops being forwarded");
        }
        if (f == null && SERVER_WIDE.incrementAndGet() > MAX_PER_SERVER) {
          SERVER_WIDE.decrementAndGet();
          throw new LimitReached("this server already forwards " + MAX_PER_SERVER + " ports, the most it may");
        }
        try {
          f = open(port, bindHost, idle);
        } catch (IOException | RuntimeException e) {
          if (!listeners.containsKey(port)) {
            SERVER_WIDE.decrementAndGet();
          }
          throw e;
        }
        listeners.put(port, f);
      }
      f.lastUsed = System.nanoTime();
    }
    InetAddress bound = f.listener.getInetAddress();
    // a server bound to every address is still reached on loopback from this machine
    String host = bound.isAnyLocalAddress() ? "127.0.0.1" : bound.getHostAddress();
    return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + f.listener.getLocalPort());
  }

  private Forward open(int port, String bindHost, Duration idle) throws IOException {
    ServerSocket listener = new ServerSocket();
    try {
      listener.bind(new InetSocketAddress(InetAddress.getByName(bindHost), 0));
      // the accept loop wakes this often to see whether the port has been idle long enough
      listener.setSoTimeout((int) Math.max(50, Math.min(idle.toMillis() / 4, 30_000)));
    } catch (IOException | RuntimeException e) {
      listener.close();
      throw e;
    }
    Forward f = new Forward(listener);
    Thread.ofVirtual().name("sandboxes-forward-" + sandbox.id() + "-" + port).start(() -> accept(f, port, idle));
    StructuredLog.atInfo(LOG).addKeyValue("event", "port.forwarded").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
        .addKeyValue("listen", listener.getLocalPort()).log("sandbox port forwarded");
    return f;
  }

  /** Stops forwarding a port whose listener has been idle: closes it and forgets it. */
  private synchronized boolean expire(Forward f, int port, Duration idle) {
    if (f.active.get() > 0 || System.nanoTime() - f.lastUsed < idle.toNanos()) {
      return false;
    }
    if (listeners.get(port) == f) {
      listeners.remove(port);
      SERVER_WIDE.decrementAndGet();
    }
    try {
      f.listener.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    StructuredLog.atInfo(LOG).addKeyValue("event", "port.unforwarded").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
        .log("a forwarded port was idle and stopped listening");
    return true;
  }

  private void accept(Forward f, int port, Duration idle) {
    try {
      acceptUntilClosed(f, port, idle);
    } finally {
      f.acceptEnded.countDown();
    }
  }

  private void acceptUntilClosed(Forward f, int port, Duration idle) {
    ServerSocket listener = f.listener;
    while (!listener.isClosed()) {
      Socket client;
      try {
        client = listener.accept();
      } catch (java.net.SocketTimeoutException e) {
        if (expire(f, port, idle)) {
          return;
        }
        continue;
      } catch (IOException e) {
        return; // closed with the sandbox or the server
      }
      f.active.incrementAndGet();
      f.lastUsed = System.nanoTime();
      Thread.ofVirtual().name("sandboxes-relay-" + sandbox.id() + "-" + port).start(() -> {
        try {
          relay(client, port);
        } finally {
          f.lastUsed = System.nanoTime();
          f.active.decrementAndGet();
        }
      });
    }
  }


  private void relay(Socket client, int port) {
    try (client) {
      TrafficWake w = wake;
      if (sandbox.paused() && (w == null || w.wake(sandbox) != TrafficWake.Outcome.AWAKE)) {
        // closed unanswered: a paused sandbox that traffic does not resume (or whose resume failed)
        StructuredLog.atInfo(LOG).addKeyValue("event", "port.paused").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
            .log("a forwarded connection to a paused sandbox was closed: traffic does not resume it");
        return;
      }
      PortStream remote;
      try {
        remote = sandbox.daemon().connectPort(port);
      } catch (DaemonException e) {
        // nothing listening there (or no daemon): worth saying where someone will look
        StructuredLog.atInfo(LOG).addKeyValue("event", "port.unreachable").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
            .addKeyValue("reason", e.getMessage()).log("a forwarded connection could not reach the sandbox's port");
        return;
      }
      try (remote) {
        client.setTcpNoDelay(true);
        Thread up = Thread.ofVirtual().name("sandboxes-relay-up-" + sandbox.id() + "-" + port).start(() -> {
          try {
            // not closed here: closing a socket's stream closes the socket, and the answer may still be coming
            InputStream in = client.getInputStream();
            byte[] buf = new byte[BUFFER];
            int n;
            while ((n = in.read(buf)) > 0) {
              remote.write(buf, 0, n);
            }
            remote.shutdownOutput();
          } catch (IOException e) {
            remote.close(); // the client reset, or the stream failed: the connection inside ends too
          }
        });
        try {
          OutputStream out = client.getOutputStream();
          byte[] chunk;
          while ((chunk = remote.read()) != null) {
            out.write(chunk);
          }
          client.shutdownOutput();
          remote.awaitEnd(); // until the client has closed its side too
        } catch (DaemonException e) {
          // reset inside the sandbox, or the sandbox is gone: the client sees a reset, not a clean end
          LOG.debug("relay to port {} of sandbox {} failed: {}", port, sandbox.id(), e.getMessage());
          client.setSoLinger(true, 0);
        }
        up.interrupt();
      }
    } catch (IOException | RpcError | RuntimeException e) {
      LOG.debug("relay to port {} of sandbox {} failed: {}", port, sandbox.id(), e.toString());
    }
  }

  /**
   * Stops listening on every port, and returns once nothing listens there any more; connections
   * already relayed end with their sandbox. A listener that a virtual thread waits on in
   * {@code accept} keeps its socket until that thread has left the call (the JDK closes it then),
   * taking connections meanwhile, so the wait is for the accept loops to end (at most
   * {@link #CLOSE_WAIT}; they end as soon as they are scheduled).
   */
  @Override
  public void close() {
    List<Forward> closing;
    synchronized (this) {
      closed = true;
      closing = List.copyOf(listeners.values());
      for (Forward f : closing) {
        try {
          f.listener.close();
        } catch (IOException ignored) {
          // closing anyway
        }
        SERVER_WIDE.decrementAndGet();
      }
      listeners.clear();
    }
    // outside the lock: a loop that just timed out takes it to see whether its port expired
    long until = System.nanoTime() + CLOSE_WAIT.toNanos();
    for (Forward f : closing) {
      // short and bounded: finished also when the caller is interrupted, its flag kept
      if (!io.sandboxes.e2b.internal.Tasks.awaitUninterruptibly(f.acceptEnded, Duration.ofNanos(Math.max(0, until - System.nanoTime())))) {
        LOG.warn("a forwarded port of sandbox {} still listened {} ms after it was closed", sandbox.id(), CLOSE_WAIT.toMillis());
      }
    }
  }

  /** The longest {@link #close} waits for its listeners' accept loops to leave. */
  static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
}
