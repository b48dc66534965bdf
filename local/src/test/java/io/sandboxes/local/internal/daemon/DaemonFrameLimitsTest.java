package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The host's listener facing a hostile daemon: this test is the daemon, speaking raw frames to
 * the real host code. A bad frame must cost the host its connection, never its memory.
 */
class DaemonFrameLimitsTest {
  private Path root;
  private DaemonListener listener;

  @BeforeEach
  void up() throws Exception {
    root = Files.createTempDirectory(Path.of("/tmp"), "sbxf-");
    listener = DaemonListener.open(root.resolve("s"));
  }

  @AfterEach
  void down() throws Exception {
    listener.close();
    DaemonSandbox.deleteTree(root);
  }

  /** A fake daemon's end of a connection. */
  private final class Fake implements AutoCloseable {
    final SocketChannel ch;

    Fake() throws IOException {
      ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      ch.connect(UnixDomainSocketAddress.of(listener.socket()));
    }

    void frame(long len, int stream, int type, byte[] payload) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(12 + payload.length);
      b.putInt((int) len).putInt(stream).put((byte) type).put((byte) 0).putShort((short) 0).put(payload).flip();
      while (b.hasRemaining()) {
        ch.write(b);
      }
    }

    void hello() throws IOException {
      byte[] p = new Wire.Out().u16(Wire.VERSION).u32(42).u32(0).u32(Wire.MAX_PAYLOAD).u32(Wire.WINDOW)
          .u32(Wire.INITIAL_CREDIT).u32(Wire.FRAME_COST).toBytes();
      frame(p.length, 0, Wire.HELLO, p);
    }

    /** Reads one host frame: {length, stream, type}. */
    int[] read() throws IOException {
      ByteBuffer h = ByteBuffer.allocate(12);
      while (h.hasRemaining()) {
        if (ch.read(h) < 0) {
          throw new IOException("closed");
        }
      }
      h.flip();
      int len = h.getInt();
      int stream = h.getInt();
      int type = h.get() & 0xff;
      ByteBuffer p = ByteBuffer.allocate(len);
      while (p.hasRemaining()) {
        if (ch.read(p) < 0) {
          throw new IOException("closed");
        }
      }
      return new int[] {len, stream, type};
    }

    /** Whether the host has closed its end. */
    boolean closedByHost() throws IOException {
      ByteBuffer one = ByteBuffer.allocate(1);
      try {
        return ch.read(one) < 0;
      } catch (IOException e) {
        return true;
      }
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  @Test
  @DisplayName("a header announcing 2 GiB is refused at once: the host drops the connection without waiting for (or allocating) the payload")
  void oversizedHeader() throws Exception {
    try (Fake f = new Fake()) {
      f.frame(0x7fff_ffffL, 0, Wire.HELLO, new byte[0]);
      await().atMost(Duration.ofSeconds(10)).until(f::closedByHost);
      assertThat(listener.current()).isNull();
    }
    try (Fake f = new Fake()) {
      f.hello();
      DaemonConnection c = listener.awaitConnection(Duration.ofSeconds(5));
      f.frame(Wire.MAX_PAYLOAD + 1L, 7, Wire.FILE_CHUNK, new byte[0]);
      await().atMost(Duration.ofSeconds(10)).until(() -> !c.isOpen());
      assertThat(c.closeReason()).contains("over the limit");
      assertThat(f.closedByHost()).isTrue();
    }
  }

  @Test
  @DisplayName("malformed frames (unknown type, reserved bytes, a truncated answer, a wrong first frame) drop the connection and fail the call in flight")
  void malformed() throws Exception {
    try (Fake f = new Fake()) {
      f.frame(0, 0, Wire.OK, new byte[0]); // not a HELLO
      await().atMost(Duration.ofSeconds(10)).until(f::closedByHost);
    }
    try (Fake f = new Fake()) {
      f.hello();
      DaemonConnection c = listener.awaitConnection(Duration.ofSeconds(5));
      f.frame(0, 3, 0x7e, new byte[0]);
      await().atMost(Duration.ofSeconds(10)).until(() -> !c.isOpen());
      assertThat(c.closeReason()).contains("unknown type");
    }
    try (Fake f = new Fake()) {
      f.hello();
      DaemonConnection c = listener.awaitConnectionOtherThan(null, Duration.ofSeconds(5));
      CompletableFuture<Void> ping = CompletableFuture.runAsync(() -> {
        try {
          c.ping();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      int[] req = f.read();
      assertThat(req[2]).isEqualTo(Wire.PING);
      f.frame(3, req[1], Wire.ERROR, new byte[] {0, 1, 0}); // an ERROR cut short
      await().atMost(Duration.ofSeconds(10)).until(() -> !c.isOpen());
      assertThat(c.closeReason()).contains("ended early");
      assertThatThrownBy(ping::join).hasCauseInstanceOf(java.io.UncheckedIOException.class)
          .rootCause().isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.DISCONNECTED));
    }
  }

  @Test
  @DisplayName("a daemon that sends output beyond its credit to a reader that does not read is dropped: what waits on the host stays within the window")
  void creditOverrun() throws Exception {
    try (Fake f = new Fake()) {
      f.hello();
      DaemonConnection c = listener.awaitConnection(Duration.ofSeconds(5));
      CompletableFuture<DaemonProcess> started = CompletableFuture.supplyAsync(() -> {
        try {
          return c.start(ProcessSpec.of("/bin/yes"));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      int[] req = f.read();
      assertThat(req[2]).isEqualTo(Wire.PROC_START);
      f.frame(4, req[1], Wire.PROC_STARTED, new byte[] {0, 0, 0, 9});
      DaemonProcess p = started.get();
      // the host grows the window to 1 MiB at once (its budget is untouched); each frame costs its
      // data and FRAME_COST: four frames of a quarter window fit, a fifth does not
      byte[] chunk = new byte[1 + 256 * 1024 - Wire.FRAME_COST];
      chunk[0] = 1;
      for (int i = 0; i < 4; i++) {
        f.frame(chunk.length, req[1], Wire.PROC_OUTPUT, chunk);
      }
      f.frame(chunk.length, req[1], Wire.PROC_OUTPUT, chunk);
      await().atMost(Duration.ofSeconds(10)).until(() -> !c.isOpen());
      assertThat(c.closeReason()).contains("credit");
      assertThatThrownBy(p::collect).isInstanceOfSatisfying(DaemonException.class,
          e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.DISCONNECTED));
    }
  }

  @Test
  @DisplayName("a connection that never says HELLO is closed after the handshake timeout, and a good daemon still gets in")
  void silentConnection() throws Exception {
    try (Fake silent = new Fake()) {
      await().atMost(DaemonListener.HANDSHAKE_TIMEOUT.plusSeconds(3)).until(silent::closedByHost);
    }
    // the same with every worker of the JVM's common pool busy (anything in the JVM may keep it so):
    // the timeout does not wait for one of them
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    int workers = java.util.concurrent.ForkJoinPool.getCommonPoolParallelism();
    java.util.List<CompletableFuture<Void>> busy = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < workers; i++) {
        busy.add(CompletableFuture.runAsync(() -> {
          // a wait the pool is not told of, so it starts no other worker in its place
          while (release.getCount() > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
          }
        }));
      }
      try (Fake silent = new Fake()) {
        await().atMost(DaemonListener.HANDSHAKE_TIMEOUT.plusSeconds(3)).until(silent::closedByHost);
      }
    } finally {
      release.countDown();
    }
    CompletableFuture.allOf(busy.toArray(CompletableFuture[]::new)).get();
    try (Fake good = new Fake()) {
      good.hello();
      DaemonConnection c = listener.awaitConnection(Duration.ofSeconds(5));
      assertThat(c.hello().workerPid()).isEqualTo(42);
      CompletableFuture<Void> ping = CompletableFuture.runAsync(() -> {
        try {
          c.ping();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      int[] req = good.read();
      good.frame(0, req[1], Wire.OK, new byte[0]);
      ping.get();
    }
  }
}
