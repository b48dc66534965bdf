package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Network changes of running containers exclude container starts and removals. */
class NetworkChangeLockTest {
  @Test
  @DisplayName("a start waits for a network change under way; a change waits for a start under way")
  void exclusion() throws Exception {
    try (java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
      exclusion(threads);
    }
  }

  private static void exclusion(java.util.concurrent.Executor threads) throws Exception {
    CountDownLatch changing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> change = CompletableFuture.runAsync(() -> DockerRuntime.changingNetworks(() -> {
      changing.countDown();
      await().atMost(Duration.ofSeconds(150)).until(() -> release.getCount() == 0);
    }), threads);
    // the lock is this JVM's: other classes' container starts and removals hold it meanwhile
    assertThat(changing.await(120, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<String> start = CompletableFuture.supplyAsync(() -> DockerRuntime.startingOrRemoving(() -> "started"), threads);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !start.isDone());
    release.countDown();
    assertThat(start.get(120, TimeUnit.SECONDS)).isEqualTo("started");
    change.get(120, TimeUnit.SECONDS);

    // a change waits for a start under way (nothing here waits on a second acquisition while it
    // holds one: the lock is fair and this JVM's, and other classes' starts and joins use it too)
    AtomicInteger inside = new AtomicInteger();
    CountDownLatch in = new CountDownLatch(1);
    CountDownLatch out = new CountDownLatch(1);
    CompletableFuture<Integer> a = CompletableFuture.supplyAsync(() -> DockerRuntime.startingOrRemoving(() -> {
      inside.incrementAndGet();
      in.countDown();
      await().atMost(Duration.ofSeconds(150)).until(() -> out.getCount() == 0);
      return inside.decrementAndGet();
    }), threads);
    assertThat(in.await(120, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Integer> seen = CompletableFuture.supplyAsync(() -> {
      int[] atChange = new int[1];
      DockerRuntime.changingNetworks(() -> atChange[0] = inside.get());
      return atChange[0];
    }, threads);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !seen.isDone());
    out.countDown();
    a.get(120, TimeUnit.SECONDS);
    assertThat(seen.get(120, TimeUnit.SECONDS)).as("starts under way when the change ran").isZero();
  }
}
