package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class NdjsonLinesTest {

  /** Hands out at most {@code chunk} bytes per read, as a network does at its own boundaries. */
  private static InputStream chunked(byte[] data, int chunk) {
    return new ByteArrayInputStream(data) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, chunk));
      }
    };
  }

  private static List<String> all(NdjsonLines lines) throws IOException {
    List<String> out = new ArrayList<>();
    String l;
    while ((l = lines.next()) != null) {
      out.add(l);
    }
    return out;
  }

  @Test
  @DisplayName("multi-byte characters split across every possible chunk boundary come out whole")
  void utf8SplitAcrossChunks() throws IOException {
    String a = "{\"type\":\"stdout\",\"text\":\"héllo ✓ 日本語 🎉\"}";
    String b = "{\"type\":\"end_of_execution\"}";
    byte[] data = (a + "\n" + b + "\n").getBytes(StandardCharsets.UTF_8);
    for (int chunk = 1; chunk <= 7; chunk++) {
      assertThat(all(new NdjsonLines(chunked(data, chunk), 1 << 20))).as("chunks of %d bytes", chunk).containsExactly(a, b);
    }
  }

  @Test
  @DisplayName("a last line without a newline is still returned; an empty stream has no lines")
  void lastLine() throws IOException {
    assertThat(all(new NdjsonLines(chunked("one\ntwo".getBytes(StandardCharsets.UTF_8), 2), 100))).containsExactly("one", "two");
    assertThat(all(new NdjsonLines(chunked(new byte[0], 2), 100))).isEmpty();
  }

  @Test
  @DisplayName("a line longer than the limit fails the stream instead of growing memory")
  void bounded() {
    byte[] data = "x".repeat(1000).getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> all(new NdjsonLines(chunked(data, 64), 999))).isInstanceOf(IOException.class).hasMessageContaining("999");
  }
}
