package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class WatchdogTest {

  @Test
  @DisplayName("close ends the timer before it returns, also when the caller is interrupted, and keeps the caller's flag")
  void closeWhileInterrupted() {
    // a close that returned at once for an interrupted caller would leave timers to end later:
    // over many rounds some would still be counted live the moment close returns
    String owner = "watchdog-test-" + System.nanoTime();
    AtomicInteger fired = new AtomicInteger();
    for (int i = 0; i < 300; i++) {
      Watchdog w = Watchdog.arm(owner, Duration.ofHours(1), fired::incrementAndGet);
      Thread.currentThread().interrupt();
      w.close();
      assertThat(Thread.interrupted()).as("the caller's interrupt flag, round %d", i).isTrue();
      assertThat(Tasks.live(owner)).as("timers still live the moment close returned, round %d", i).isZero();
    }
    assertThat(fired).hasValue(0);
  }
}
