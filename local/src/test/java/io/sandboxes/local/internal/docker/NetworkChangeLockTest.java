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

/** Network changes of running containers exclude container starts and removals, which do not exclude each other. */
class NetworkChangeLockTest {
  @Test
  @DisplayName("a start waits for a network change under way; two starts run at once; a change waits for starts under way")
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
      await().atMost(Duration.ofSeconds(20)).until(() -> release.getCount() == 0);
    }), threads);
    assertThat(changing.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<String> start = CompletableFuture.supplyAsync(() -> DockerRuntime.startingOrRemoving(() -> "started"), threads);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !start.isDone());
    release.countDown();
    assertThat(start.get(10, TimeUnit.SECONDS)).isEqualTo("started");
    change.get(10, TimeUnit.SECONDS);

    // two starts at once, and a change that waits until both are done
    AtomicInteger inside = new AtomicInteger();
    CountDownLatch bothIn = new CountDownLatch(2);
    CountDownLatch out = new CountDownLatch(1);
    Runnable starter = () -> DockerRuntime.startingOrRemoving(() -> {
      inside.incrementAndGet();
      bothIn.countDown();
      await().atMost(Duration.ofSeconds(20)).until(() -> out.getCount() == 0);
      return inside.decrementAndGet();
    });
    CompletableFuture<Void> a = CompletableFuture.runAsync(starter, threads);
    CompletableFuture<Void> b = CompletableFuture.runAsync(starter, threads);
    assertThat(bothIn.await(10, TimeUnit.SECONDS)).as("starts run in parallel").isTrue();
    CompletableFuture<Integer> seen = CompletableFuture.supplyAsync(() -> {
      int[] atChange = new int[1];
      DockerRuntime.changingNetworks(() -> atChange[0] = inside.get());
      return atChange[0];
    }, threads);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !seen.isDone());
    out.countDown();
    a.get(10, TimeUnit.SECONDS);
    b.get(10, TimeUnit.SECONDS);
    assertThat(seen.get(10, TimeUnit.SECONDS)).as("starts under way when the change ran").isZero();
  }
}
