package io.sandboxes.examples.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.local.internal.docker.DockerRuntime;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A benchmark ended midway by a signal, as Ctrl-C ends it, leaves none of its raw containers behind. */
class BenchLeftoversTest {

  @Test
  @Timeout(value = 6, unit = TimeUnit.MINUTES)
  @DisplayName("WarmBench stopped by SIGTERM while 30 idle raw containers start removes every one of them before its JVM exits")
  void signalledBenchLeavesNoRawContainer() throws Exception {
    Path log = Files.createTempFile("warm-bench-", ".log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // one cycle, bursts of one, then 30 idle raw containers: the signal lands while they start
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), WarmBench.class.getName(), "1", "1", "1", "30")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    AtomicReference<String> run = new AtomicReference<>();
    try (DockerRuntime docker = DockerRuntime.connect()) {
      try {
        Pattern label = Pattern.compile(Pattern.quote(RawDocker.LABEL_BASELINE) + "=([0-9a-f]{8})");
        await().atMost(Duration.ofMinutes(1)).until(() -> {
          Matcher m = label.matcher(Files.readString(log, StandardCharsets.UTF_8));
          return m.find() && run.compareAndSet(null, m.group(1)) || run.get() != null;
        });
        await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofMillis(200)).failFast(() -> !p.isAlive())
            .until(() -> raw(docker, run.get()).size() >= 5);
        p.destroy(); // SIGTERM: the shutdown hook runs, as on Ctrl-C
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the benchmark's JVM exits after the signal").isTrue();
        assertThat(raw(docker, run.get())).as(Files.readString(log, StandardCharsets.UTF_8)).isEmpty();
      } finally {
        p.destroyForcibly();
        if (run.get() != null) {
          raw(docker, run.get()).forEach(docker::remove);
        }
        Files.deleteIfExists(log);
      }
    }
  }

  /** The ids of the run's raw containers (docker-java's types are shaded inside the local runtime's jar). */
  private static List<String> raw(DockerRuntime docker, String run) {
    return docker.client().listContainersCmd().withShowAll(true).withLabelFilter(Map.of(RawDocker.LABEL_BASELINE, run)).exec()
        .stream().map(c -> c.getId()).toList();
  }
}
