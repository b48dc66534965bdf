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
}
