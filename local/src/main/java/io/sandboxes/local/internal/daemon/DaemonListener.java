package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host end of one sandbox's daemon transport: a listening unix socket in a folder of its
 * own, which the container sees read-only (so the sandbox can connect to the socket but cannot
 * replace it, add to the folder or point it elsewhere). The daemon connects out to it; the host
 * never opens a path the sandbox controls.
 *
 * <p>The newest daemon connection that completes its handshake is the current one; an older one
 * is closed. A connection must say HELLO within {@link #HANDSHAKE_TIMEOUT}, and at most
 * {@link #MAX_HANDSHAKES} may be pending at once (more are closed at once), so a sandbox that
 * opens connections and stays silent holds nothing for long.
 */
public final class DaemonListener implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DaemonListener.class);
  /** The socket's name in the folder. */
  public static final String SOCKET_NAME = "envd.sock";
  static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);
  static final int MAX_HANDSHAKES = 4;
  /** The most connections accepted per second: a sandbox reconnecting in a loop waits, unanswered, beyond. */
  static final int ACCEPTS_PER_SECOND = 20;

  private final Path folder;
  private final Path socket;
  private final ServerSocketChannel server;
  private final Semaphore handshakes = new Semaphore(MAX_HANDSHAKES);
  private final Thread acceptor;
  private @Nullable DaemonConnection current;
  private volatile boolean closed;

  private DaemonListener(Path folder, Path socket, ServerSocketChannel server) {
    this.folder = folder;
    this.socket = socket;
    this.server = server;
    this.acceptor = Thread.ofVirtual().name("sandboxes-daemon-accept").unstarted(this::acceptLoop);
  }

  /**
   * Listens in a sandbox's folder, made (mode 0700) when missing. A socket left there by an
   * earlier server is replaced, which is how a restarted server takes its sandboxes' daemons back.
   */
  public static DaemonListener open(Path folder) throws IOException {
    prepareFolder(folder);
    Path socket = folder.resolve(SOCKET_NAME);
    if (socket.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8).length > 107) {
      throw new IOException("the daemon socket path is too long for a unix socket (107 bytes at most): " + socket);
    }
    Files.deleteIfExists(socket); // does not follow a symlink: removes the link itself
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      server.bind(UnixDomainSocketAddress.of(socket));
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    DaemonListener l = new DaemonListener(folder, socket, server);
    l.acceptor.start();
    return l;
  }

  /** Makes the folder (0700) or checks that what is there is a real folder, not a link. */
  static void prepareFolder(Path folder) throws IOException {
    if (Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
      if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException("not a folder (or a symlink): " + folder);
      }
    } else {
      Path parent = folder.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }
    Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwx------"));
  }

  public Path folder() {
    return folder;
  }

  public Path socket() {
    return socket;
  }

  /** The current connection, if a daemon is connected. */
  public synchronized @Nullable DaemonConnection current() {
    DaemonConnection c = current;
    return c != null && c.isOpen() ? c : null;
  }

  /** Waits for a connected daemon. */
  public DaemonConnection awaitConnection(Duration timeout) throws IOException, TimeoutException {
    return awaitConnectionOtherThan(null, timeout);
  }

  /** Waits for a connected daemon other than {@code old} (after a restart of either side). */
  public synchronized DaemonConnection awaitConnectionOtherThan(@Nullable DaemonConnection old, Duration timeout)
      throws IOException, TimeoutException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (closed) {
        throw new ClosedChannelException();
      }
      DaemonConnection c = current;
      if (c != null && c.isOpen() && c != old) {
        return c;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("no daemon connected to " + socket + " within " + timeout);
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while waiting for the sandbox daemon");
      }
    }
  }

  private void acceptLoop() {
    long second = System.nanoTime();
    int accepted = 0;
    while (!closed) {
      if (accepted >= ACCEPTS_PER_SECOND) {
        long left = second + 1_000_000_000L - System.nanoTime();
        if (left > 0) {
          java.util.concurrent.locks.LockSupport.parkNanos(left); // the rest wait in the kernel's backlog
        }
      }
      if (System.nanoTime() - second >= 1_000_000_000L) {
        second = System.nanoTime();
        accepted = 0;
      }
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("the daemon listener at {} stopped: {}", socket, e.toString());
        }
        return;
      }
      accepted++;
      if (!handshakes.tryAcquire()) {
        close(ch);
        continue;
      }
      Thread.ofVirtual().name("sandboxes-daemon-handshake").start(() -> handshake(ch));
    }
  }

  private void handshake(SocketChannel ch) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    // run on the delay's own timer thread (a close is quick), not handed to the common pool, which anything in this
    // JVM may keep busy
    CompletableFuture.delayedExecutor(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS, Runnable::run).execute(() -> {
      if (!done.isDone()) {
        close(ch);
      }
    });
    DaemonConnection c;
    try {
      c = DaemonConnection.handshake(ch);
    } catch (IOException | RuntimeException e) {
      LOG.debug("a connection to {} failed its handshake: {}", socket, e.toString());
      close(ch);
      return;
    } finally {
      done.complete(null);
      handshakes.release();
    }
    DaemonConnection old;
    synchronized (this) {
      if (closed) {
        c.close();
        return;
      }
      old = current;
      current = c;
      notifyAll();
    }
    c.closedFuture().thenRun(() -> {
      synchronized (this) {
        notifyAll();
      }
    });
    if (old != null) {
      old.close();
    }
    LOG.debug("sandbox daemon connected at {}: worker {} (generation {})", socket, c.hello().workerPid(), c.hello().generation());
  }

  private static void close(SocketChannel ch) {
    try {
      ch.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  /** Stops listening, closes the current connection and removes the socket (not the folder). */
  @Override
  public void close() {
    DaemonConnection c;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      c = current;
      current = null;
      notifyAll();
    }
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    try {
      acceptor.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (c != null) {
      c.close();
    }
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      LOG.debug("could not remove {}: {}", socket, e.toString());
    }
  }
}
