package io.sandboxes.local.files;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.FileOptions;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.WriteInfo;
import io.sandboxes.local.SharedServer;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Issue 24 item 2: streamed writes and reads through {@code sandbox.files()} against the real
 * local server hold one piece at a time, never the file: 64 MiB go up from a generated stream and
 * come back through {@code readStream}, checked by SHA-256 on both ends and in the sandbox, while
 * the heap (measured after a full collection, with three quarters of the file under way) grows by
 * far less than the file.
 *
 * <p>Isolated: the heap is measured, so no other test class runs meanwhile.
 */
@Isolated
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FilesStreamingTest {
  private static final long SIZE = 64L << 20;
  /** Far below the 48 MiB a client holding the file would have at the measuring point. */
  private static final long MAX_GROWTH = 24L << 20;

  private LiveSandbox sandbox;

  @BeforeAll
  void start(E2BApi e2b) {
    sandbox = e2b.create();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /**
   * {@code size} bytes of a deterministic generator, digested as they are handed out; once
   * three quarters are out, the heap's growth over {@code base} is measured.
   */
  private static final class Generated extends InputStream {
    private final long size;
    private final MessageDigest digest;
    private final long base;
    private final AtomicLong growth;
    private long produced;
    private long state = 0x9E3779B97F4A7C15L;

    Generated(long size, long base, AtomicLong growth) throws Exception {
      this.size = size;
      this.digest = MessageDigest.getInstance("SHA-256");
      this.base = base;
      this.growth = growth;
    }

    @Override
    public int read() {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (produced >= size) {
        return -1;
      }
      int n = (int) Math.min(len, size - produced);
      for (int i = 0; i < n; i++) {
        state ^= state << 13;
        state ^= state >>> 7;
        state ^= state << 17;
        b[off + i] = (byte) state;
      }
      digest.update(b, off, n);
      long before = produced;
      produced += n;
      if (before < size * 3 / 4 && produced >= size * 3 / 4) {
        growth.set(heapAfterGc() - base);
      }
      return n;
    }

    String hex() {
      return HexFormat.of().formatHex(digest.digest());
    }
  }

  @Test
  @DisplayName("64 MiB written from a stream and read back as a stream: the same SHA-256 on both ends and in the sandbox, the heap growing by under 24 MiB each way")
  void sixtyFourMebibytes() throws Exception {
    AtomicLong writeGrowth = new AtomicLong(-1);
    Generated source = new Generated(SIZE, heapAfterGc(), writeGrowth);
    WriteInfo written = sandbox.files().write("/home/user/big.bin", source);
    assertThat(written.path()).isEqualTo("/home/user/big.bin");
    String sent = source.hex();
    assertThat(writeGrowth.get()).as("heap growth with 48 MiB written").isBetween(Long.MIN_VALUE + 1, MAX_GROWTH);
    assertThat(sandbox.exec("sha256sum /home/user/big.bin | cut -d' ' -f1").stdout().strip()).isEqualTo(sent);

    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    long base = heapAfterGc();
    long readGrowth = -1;
    long total = 0;
    try (InputStream in = sandbox.files().readStream("/home/user/big.bin")) {
      byte[] buf = new byte[64 * 1024];
      int n;
      while ((n = in.read(buf)) >= 0) {
        digest.update(buf, 0, n);
        long before = total;
        total += n;
        if (before < SIZE * 3 / 4 && total >= SIZE * 3 / 4) {
          readGrowth = heapAfterGc() - base;
        }
      }
    }
    assertThat(total).isEqualTo(SIZE);
    assertThat(HexFormat.of().formatHex(digest.digest())).isEqualTo(sent);
    assertThat(readGrowth).as("heap growth with 48 MiB read").isBetween(Long.MIN_VALUE + 1, MAX_GROWTH);
  }

  @Test
  @DisplayName("a gzip-compressed stream upload of 16 MiB arrives whole (same SHA-256 in the sandbox)")
  void gzipStream() throws Exception {
    Generated source = new Generated(16L << 20, heapAfterGc(), new AtomicLong());
    sandbox.files().write("/home/user/big-gz.bin", source, FileOptions.defaults().withGzip(true));
    assertThat(sandbox.exec("sha256sum /home/user/big-gz.bin | cut -d' ' -f1").stdout().strip()).isEqualTo(source.hex());
  }

  @Test
  @DisplayName("streams closed before their end leave nothing running: their idle timers end with them")
  void closedEarly() throws IOException {
    sandbox.files().write("/home/user/some.bin", new byte[8 << 20]);
    for (int i = 0; i < 12; i++) {
      try (InputStream in = sandbox.files().readStream("/home/user/some.bin")) {
        assertThat(in.readNBytes(1024)).hasSize(1024);
      }
    }
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> io.sandboxes.e2b.internal.Tasks.live(sandbox.id()) == 0);
  }
}
