package io.sandboxes.local.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The warm pool's default maximum, from the engine's memory. */
class WarmPoolDefaultMaxTest {

  private static final long GIB = 1L << 30;

  @Test
  @DisplayName("a 64th of the engine's memory at 8 MiB a member, never below 16 nor above 64; 16 when the memory is unknown")
  void aShareOfTheEnginesMemory() {
    assertThat(WarmPool.defaultMax(OptionalLong.of(2 * GIB))).isEqualTo(16);
    assertThat(WarmPool.defaultMax(OptionalLong.of(8 * GIB))).isEqualTo(16);
    assertThat(WarmPool.defaultMax(OptionalLong.of(16 * GIB))).isEqualTo(32);
    assertThat(WarmPool.defaultMax(OptionalLong.of(24 * GIB))).isEqualTo(48);
    assertThat(WarmPool.defaultMax(OptionalLong.of(32 * GIB))).isEqualTo(64);
    assertThat(WarmPool.defaultMax(OptionalLong.of(1024 * GIB))).isEqualTo(64);
    assertThat(WarmPool.defaultMax(OptionalLong.empty())).isEqualTo(16);
  }
}
