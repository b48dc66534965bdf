package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class Utf8AccumulatorTest {

  @Test
  @DisplayName("a character split across chunks comes out whole once its last byte arrives")
  void splitCharacters() {
    byte[] all = "aé€😀z".getBytes(StandardCharsets.UTF_8);
    Utf8Accumulator acc = new Utf8Accumulator();
    StringBuilder seen = new StringBuilder();
    for (byte b : all) {
      String piece = acc.feed(new byte[] {b});
      assertThat(piece).doesNotContain("\uFFFD");
      seen.append(piece);
    }
    seen.append(acc.finish());
    assertThat(seen.toString()).isEqualTo("aé€😀z");
    assertThat(acc.text()).isEqualTo("aé€😀z");
  }

  @Test
  @DisplayName("a truncated trailing sequence becomes one replacement character at the end, nothing is dropped silently")
  void truncatedTail() {
    byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
    Utf8Accumulator acc = new Utf8Accumulator();
    assertThat(acc.feed(Arrays.copyOf(euro, 2))).isEmpty();
    assertThat(acc.finish()).isEqualTo("\uFFFD");
  }

  @Test
  @DisplayName("the kept text, decoded once, is what chunk-by-chunk decoding gives, malformed bytes included")
  void keptTextMatchesFedText() {
    java.util.Random random = new java.util.Random(3);
    for (int round = 0; round < 200; round++) {
      byte[] all = new byte[random.nextInt(64)];
      for (int i = 0; i < all.length; i++) {
        // mostly multi-byte lead and continuation bytes, so sequences break and split often
        all[i] = (byte) (random.nextBoolean() ? 0x80 + random.nextInt(0x80) : random.nextInt(0x100));
      }
      Utf8Accumulator acc = new Utf8Accumulator();
      StringBuilder fed = new StringBuilder();
      int at = 0;
      while (at < all.length) {
        int n = 1 + random.nextInt(5);
        fed.append(acc.feed(Arrays.copyOfRange(all, at, Math.min(all.length, at + n))));
        at += n;
      }
      fed.append(acc.finish());
      assertThat(acc.text()).isEqualTo(fed.toString()).isEqualTo(new String(all, StandardCharsets.UTF_8));
    }
  }

  @Test
  @DisplayName("an accumulator that keeps nothing holds no output and says so when asked for it")
  void keepsNothing() {
    Utf8Accumulator acc = new Utf8Accumulator(false);
    assertThat(acc.feed("abc".getBytes(StandardCharsets.UTF_8))).isEqualTo("abc");
    org.assertj.core.api.Assertions.assertThatThrownBy(acc::text).isInstanceOf(IllegalStateException.class);
  }
}
