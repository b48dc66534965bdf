package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxMetrics;
import io.sandboxes.local.internal.CgroupReader;
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
      containerId = server.registry().find(s.id()).orElseThrow().containerId();
      CgroupReader.Usage idle = reader.read(containerId, 2);
      assertThat(idle.memUsed()).isPositive();
      assertThat(idle.memLimit()).isEqualTo(1024L * 1024 * 1024);

      Instant busySince = Instant.now();
      // one core kept busy for a minute at most: about 50 % of the sandbox's two
      s.exec("nohup timeout 60 sh -c 'while :; do :; done' >/dev/null 2>&1 &");
      // a loaded 2-core machine may give the loop well under a core; a reader that saw nothing reads 0
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500))
          .until(() -> reader.read(containerId, 2).cpuUsedPct(), pct -> pct > 15);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1))
          .until(() -> s.metrics(busySince, null), l -> l.stream().anyMatch(m -> m.cpuUsedPct() > 15));
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
}
