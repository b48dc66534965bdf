package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class WatchdogTest {

  @Test
  @DisplayName("close disarms before it returns, also when the caller is interrupted, and keeps the caller's flag")
  void closeWhileInterrupted() {
    String owner = "watchdog-test-" + System.nanoTime();
    AtomicInteger fired = new AtomicInteger();
    for (int i = 0; i < 300; i++) {
      Watchdog w = Watchdog.arm(owner, Duration.ofMillis(i % 3), fired::incrementAndGet);
      assertThat(Watchdog.armed(owner)).isEqualTo(1);
      Thread.currentThread().interrupt();
      w.close();
      assertThat(Thread.interrupted()).as("the caller's interrupt flag, round %d", i).isTrue();
      assertThat(Watchdog.armed(owner)).as("armed the moment close returned, round %d", i).isZero();
    }
    int afterClose = fired.get();
    // a watchdog due in 0-2 ms may have fired before its close; none fires after it
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(fired).hasValue(afterClose));
  }

  @Test
  @DisplayName("the action runs once its time has passed, not before")
  void fires() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    long t0 = System.nanoTime();
    try (Watchdog w = Watchdog.arm("watchdog-fires", Duration.ofMillis(200), ran::countDown)) {
      assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    }
  }

  @Test
  @DisplayName("one due sooner than the timer sleeps for fires on time; one due after a closed one's deadline fires too")
  void sleepingTimerStillFiresOnTime() throws Exception {
    try (Watchdog far = Watchdog.arm("watchdog-far", Duration.ofSeconds(30), () -> {})) {
      CountDownLatch soon = new CountDownLatch(1);
      long t0 = System.nanoTime();
      try (Watchdog near = Watchdog.arm("watchdog-near", Duration.ofMillis(100), soon::countDown)) {
        assertThat(soon.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("fired long before the far one's deadline")
            .isBetween(Duration.ofMillis(100), Duration.ofSeconds(2));
      }
    }
    // the timer sleeps until a deadline that is closed before it comes; one armed meanwhile, due later, still fires
    Watchdog.arm("watchdog-stale", Duration.ofMillis(150), () -> {}).close();
    CountDownLatch later = new CountDownLatch(1);
    long t0 = System.nanoTime();
    try (Watchdog w = Watchdog.arm("watchdog-later", Duration.ofMillis(400), later::countDown)) {
      assertThat(later.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofMillis(400), Duration.ofSeconds(2));
    }
  }

  @Test
  @DisplayName("close waits for an action that is running, so nothing of the call outlives it")
  void closeWaitsForARunningAction() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean finished = new AtomicBoolean();
    Watchdog w = Watchdog.arm("watchdog-running", Duration.ZERO, () -> {
      started.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      finished.set(true);
    });
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    Thread closer = Thread.ofVirtual().start(w::close);
    boolean returnedEarly;
    try {
      returnedEarly = closer.join(Duration.ofMillis(300));
    } finally {
      release.countDown(); // the timer's one thread is not left blocked for the tests after this one
    }
    assertThat(returnedEarly).as("close returned while the action ran").isFalse();
    assertThat(closer.join(Duration.ofSeconds(5))).isTrue();
    assertThat(finished).isTrue();
  }

  @Test
  @DisplayName("a failing action leaves the timer working for the others")
  void aFailingActionHarmsNoOther() throws Exception {
    try (Watchdog bad = Watchdog.arm("watchdog-bad", Duration.ZERO, () -> {
      throw new IllegalStateException("boom");
    })) {
      CountDownLatch ran = new CountDownLatch(1);
      try (Watchdog good = Watchdog.arm("watchdog-good", Duration.ofMillis(50), ran::countDown)) {
        assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  @DisplayName("the timer's thread ends once nothing is armed")
  void timerThreadEndsWhenIdle() {
    Watchdog.arm("watchdog-idle", Duration.ofHours(1), () -> {}).close();
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().equals("sandboxes-timer")));
  }
}
