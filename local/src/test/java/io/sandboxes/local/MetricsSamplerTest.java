package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxMetrics;
import io.sandboxes.local.internal.docker.CgroupReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The metrics sampler reads CPU and memory from the sandbox's cgroup files on the host, not from
 * Docker's stats endpoint (Docker 20.10 deadlocked under many concurrent stats readers): a real
 * sandbox on real Docker, a busy loop in it, and its samples through the client.
 */
@ExtendWith(SharedServer.class)
class MetricsSamplerTest {

  @Test
  @DisplayName("the sampler's source has no Docker stats call: Metrics and CgroupReader name no stats command")
  void noDockerStats() throws IOException {
    for (Class<?> c : new Class<?>[] {io.sandboxes.local.internal.Metrics.class, CgroupReader.class}) {
      try (InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
        String constants = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        assertThat(constants).as(c.getName()).doesNotContain("statsCmd").doesNotContain("Statistics");
      }
    }
  }

  @Test
  @DisplayName("a busy sandbox: the cgroup reader alone (no Docker client) and the server's samples show its CPU; a removed one is an error, not zero")
  void busySandbox(E2BApi e2b, LocalServer server) throws IOException {
    CgroupReader reader = new CgroupReader();
    String containerId;
    try (LiveSandbox s = e2b.create()) {
      containerId = server.registry().find(s.id()).orElseThrow().instanceId();
      CgroupReader.Usage idle = reader.read(containerId, 2);
      assertThat(idle.memUsed()).isPositive();
      assertThat(idle.memLimit()).isEqualTo(1024L * 1024 * 1024);

      Instant busySince = Instant.now();
      // one busy loop, its own CPU time read from the sandbox's /proc (the kernel's per-process
      // count, a source apart from the cgroup files) to check the reader's rate against
      s.exec("nohup sh -c 'echo $$ > /tmp/busy.pid; while :; do :; done' >/dev/null 2>&1 &");
      long hz = Long.parseLong(s.exec("getconf CLK_TCK").stdout().strip());
      long[] prev = {-1, 0};
      double[] seen = {0, 0};
      // a loaded 2-core machine may give the loop little of a core; a window counts once the
      // loop had at least 4 % of one core in it, and the reader must agree with its count
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(2)).until(() -> {
        long ticks = Long.parseLong(s.exec("awk '{print $14 + $15}' /proc/$(cat /tmp/busy.pid)/stat").stdout().strip());
        long at = System.nanoTime();
        double pct = reader.read(containerId, 2).cpuUsedPct();
        boolean counted = false;
        if (prev[0] >= 0) {
          double wall = (at - prev[1]) / 1e9;
          double expected = (double) (ticks - prev[0]) / hz / (wall * 2) * 100;
          if (expected >= 2) {
            seen[0] = expected;
            seen[1] = pct;
            counted = true;
          }
        }
        prev[0] = ticks;
        prev[1] = at;
        return counted;
      });
      assertThat(seen[1]).as("reader's CPU %% against the loop's own %.1f %%", seen[0])
          .isBetween(seen[0] * 0.5, seen[0] * 1.5 + 2);
      // the server's samples come from the same reader: a busy window is seen there too (idle reads 0.00-0.02)
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1))
          .until(() -> s.metrics(busySince, null), l -> l.stream().anyMatch(m -> m.cpuUsedPct() > 0.5));
      SandboxMetrics last = s.metrics().get(s.metrics().size() - 1);
      assertThat(last.memUsed()).isPositive();
      assertThat(last.cpuUsedPct()).isLessThanOrEqualTo(100.0);
      s.kill();
    }
    await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250)).until(() -> {
      try {
        reader.read(containerId, 2);
        return false;
      } catch (IOException gone) {
        return gone.getMessage().contains("has no cgroup");
      }
    });
  }

  @Test
  @DisplayName("a snapshot's freeze waits for the sandbox's transition lock, as every other change of its state does")
  void snapshotWaitsForTheSampler(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      io.sandboxes.local.internal.LocalSandbox local = server.registry().find(s.id()).orElseThrow();
      java.lang.reflect.Field f = io.sandboxes.local.internal.LocalSandbox.class.getDeclaredField("transitions");
      f.setAccessible(true);
      java.util.concurrent.locks.ReentrantLock transitions = (java.util.concurrent.locks.ReentrantLock) f.get(local);
      String name = "sampler-freeze-" + Long.toHexString(System.nanoTime());
      java.util.concurrent.CompletableFuture<io.sandboxes.e2b.SnapshotInfo> snap;
      // held here as a kill, pause or resume holds it: the commit must not freeze the container
      // under one of them (Docker 20.10 deadlocked a container frozen under a docker exec)
      transitions.lock();
      try {
        snap = java.util.concurrent.CompletableFuture.supplyAsync(() -> s.snapshot(name));
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> !snap.isDone());
      } finally {
        transitions.unlock();
      }
      io.sandboxes.e2b.SnapshotInfo taken = snap.get(90, java.util.concurrent.TimeUnit.SECONDS);
      e2b.deleteTemplate(taken.snapshotId());
    }
  }
}
