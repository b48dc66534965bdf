package io.sandboxes.local.internal.http;

import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.daemon.PortStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.FutureCallback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An HTTP/1.1 upgrade (a WebSocket's handshake) through the port proxy, as E2B's proxy carries
 * one to a sandbox's port: the request goes in with its {@code Upgrade} and
 * {@code Connection: Upgrade}; when the service answers {@code 101 Switching Protocols}, that
 * answer goes back and the client's connection is taken over from HTTP (Jetty's upgrade of the
 * endpoint), its bytes relayed to and from the stream into the sandbox both ways, untouched,
 * until either side closes. Any other answer is an ordinary one.
 *
 * <p>Bounded: a sandbox has at most {@link #MAX_PER_SANDBOX} upgraded connections open or being
 * opened through the proxy (more get a 429); each holds one daemon stream (whose window caps what
 * waits from the sandbox), one buffer of {@link #CHUNK} and two virtual threads, each blocked on
 * the slower side, so a service that floods a client that does not read holds no more than that.
 * A handshake the service leaves unanswered for {@link #HANDSHAKE_WAIT} is answered 504; an
 * upgraded connection with no bytes either way for {@link #IDLE} is closed.
 */
final class PortUpgrade {
  private static final Logger LOG = LoggerFactory.getLogger(PortUpgrade.class);
  /**
   * The most upgraded connections one sandbox may have through the proxy: enough for an app's
   * sockets, far under the daemon's stream limit that its calls share.
   */
  static final int MAX_PER_SANDBOX = 64;
  /**
   * How long the service may take to answer the handshake: Jetty does not see a client leave
   * while a request without a body waits for its answer, so this is what ends a wait for a
   * service that never answers (a 504).
   */
  static final Duration HANDSHAKE_WAIT = Duration.ofSeconds(20);
  /** How long an upgraded connection may carry nothing either way before it is closed. */
  static final Duration IDLE = Duration.ofMinutes(10);
  private static final int CHUNK = 64 * 1024;
  private static final ConcurrentHashMap<String, AtomicInteger> OPEN = new ConcurrentHashMap<>();

  private PortUpgrade() {}

  /** The protocol a request asks to upgrade to ({@code Connection: upgrade} and {@code Upgrade}), or null. */
  static @Nullable String asked(Exchange ex) {
    String upgrade = ex.header("Upgrade");
    if (upgrade == null || upgrade.isBlank() || !ex.method().equals("GET")) {
      return null;
    }
    for (String connection : ex.request.getHeaders().getValuesList("Connection")) {
      for (String token : connection.split(",")) {
        if (token.strip().toLowerCase(Locale.ROOT).equals("upgrade")) {
          return upgrade.strip();
        }
      }
    }
    return null;
  }

  /** One of a sandbox's upgraded connections, counted from the request until both sides are closed. */
  static final class Slot {
    private final String sandboxId;
    private final AtomicBoolean released = new AtomicBoolean();

    private Slot(String sandboxId) {
      this.sandboxId = sandboxId;
    }

    /** A slot, or null when the sandbox has {@link #MAX_PER_SANDBOX} already. */
    static @Nullable Slot take(String sandboxId) {
      boolean[] taken = {false};
      OPEN.compute(sandboxId, (k, n) -> {
        AtomicInteger count = n == null ? new AtomicInteger() : n;
        if (count.get() < MAX_PER_SANDBOX) {
          count.incrementAndGet();
          taken[0] = true;
        }
        return count.get() == 0 ? null : count;
      });
      return taken[0] ? new Slot(sandboxId) : null;
    }

    void release() {
      if (released.compareAndSet(false, true)) {
        OPEN.computeIfPresent(sandboxId, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
      }
    }
  }

  /** How many upgraded connections the sandbox has open or opening through the proxy. */
  static int open(String sandboxId) {
    AtomicInteger n = OPEN.get(sandboxId);
    return n == null ? 0 : n.get();
  }

  /**
   * Answers 101 with the service's headers and hands the client's connection to a relay once
   * Jetty has sent it. {@code rest} is what the service sent after its answer's head.
   */
  static void switchOver(Exchange ex, LocalSandbox sandbox, int port, PortStream remote, ByteBuffer rest, Slot slot) {
    byte[] early = new byte[rest.remaining()];
    rest.get(early);
    EndPoint endPoint = ex.request.getConnectionMetaData().getConnection().getEndPoint();
    Relay relay = new Relay(endPoint, ex.request.getComponents().getExecutor(), remote, early, slot,
        "port " + port + " of sandbox " + sandbox.id());
    ex.request.setAttribute(HttpStream.UPGRADE_CONNECTION_ATTRIBUTE, relay);
    ex.response.getHeaders().put("Connection", "Upgrade");
    ex.response.getHeaders().put("Upgrade", String.valueOf(ex.header("Upgrade")).strip());
    ex.empty(101);
  }

  /** The taken-over client connection: bytes both ways between it and the stream into the sandbox. */
  private static final class Relay extends AbstractConnection {
    private final PortStream remote;
    private final byte[] early;
    private final Slot slot;
    private final String what;
    private final AtomicInteger ended = new AtomicInteger();

    Relay(EndPoint endPoint, java.util.concurrent.Executor executor, PortStream remote, byte[] early, Slot slot, String what) {
      super(endPoint, executor);
      this.remote = remote;
      this.early = early;
      this.slot = slot;
      this.what = what;
    }

    @Override
    public void onOpen() {
      super.onOpen();
      getEndPoint().setIdleTimeout(IDLE.toMillis());
      Thread.ofVirtual().name("sandboxes-upgraded-in").start(this::toSandbox);
      Thread.ofVirtual().name("sandboxes-upgraded-out").start(this::toClient);
    }

    @Override
    public void onFillable() {
      // not used: the relay's own thread asks for the client's bytes
    }

    @Override
    public void onClose(@Nullable Throwable cause) {
      super.onClose(cause);
      remote.close();
      slot.release();
    }

    /** The client's bytes into the sandbox; the client's end of stream half-closes the stream. */
    private void toSandbox() {
      ByteBuffer buf = BufferUtil.allocate(CHUNK);
      try {
        while (true) {
          BufferUtil.clear(buf);
          int n = getEndPoint().fill(buf);
          if (n < 0) {
            remote.shutdownOutput();
            break;
          }
          if (n == 0) {
            FutureCallback readable = new FutureCallback();
            getEndPoint().fillInterested(readable);
            readable.get(); // fails when the connection idles out or closes
            continue;
          }
          remote.write(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
        }
        directionEnded(null);
      } catch (IOException | ExecutionException | RuntimeException e) {
        directionEnded(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        directionEnded(e);
      }
    }

    /** The sandbox's bytes to the client, each written before the next is read. */
    private void toClient() {
      try {
        byte[] b = early;
        while (b != null) {
          if (b.length > 0) {
            FutureCallback written = new FutureCallback();
            getEndPoint().write(written, ByteBuffer.wrap(b));
            written.get(); // fails when the client takes nothing for the idle timeout
          }
          b = remote.read();
        }
        getEndPoint().shutdownOutput();
        directionEnded(null);
      } catch (IOException | ExecutionException | RuntimeException e) {
        directionEnded(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        directionEnded(e);
      }
    }

    /** A failed direction closes both sides; two cleanly ended ones close the connection. */
    private void directionEnded(@Nullable Throwable failure) {
      if (failure != null) {
        LOG.debug("an upgraded connection to {} ended: {}", what, failure.toString());
        getEndPoint().close();
        remote.close();
        slot.release();
      } else if (ended.incrementAndGet() == 2) {
        getEndPoint().close();
        remote.close();
        slot.release();
      }
    }
  }
}
