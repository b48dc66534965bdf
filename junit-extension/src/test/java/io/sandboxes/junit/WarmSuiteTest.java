package io.sandboxes.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.sandboxes.Sandbox;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * A suite run as a build runs it, through the JUnit Platform launcher (which finds
 * {@link E2BSandboxPlanListener} on its own), with no client supplier: 8-way parallel, a sandbox
 * per test. The extension sizes the local runtime's warm pool to the suite's demand and waits for
 * it before the first create, so every test's sandbox is one the pool had started (its container
 * carries the pool's label).
 */
class WarmSuiteTest {
  /** Sandbox id to its container's pool label ("true" for a pool member), as each test saw it. */
  static final Map<String, String> poolLabels = new ConcurrentHashMap<>();

  static class EightWayCase {
    @E2BSandbox
    Sandbox sandbox;

    @Test
    void t01() {
      record(sandbox);
    }

    @Test
    void t02() {
      record(sandbox);
    }

    @Test
    void t03() {
      record(sandbox);
    }

    @Test
    void t04() {
      record(sandbox);
    }

    @Test
    void t05() {
      record(sandbox);
    }

    @Test
    void t06() {
      record(sandbox);
    }

    @Test
    void t07() {
      record(sandbox);
    }

    @Test
    void t08() {
      record(sandbox);
    }

    @Test
    void t09() {
      record(sandbox);
    }

    @Test
    void t10() {
      record(sandbox);
    }

    @Test
    void t11() {
      record(sandbox);
    }

    @Test
    void t12() {
      record(sandbox);
    }
  }

  static void record(Sandbox s) {
    assertThat(s.exec("echo hi").stdout()).isEqualTo("hi\n");
    poolLabels.put(s.id(), poolLabel(s.id()));
  }

  /**
   * The container's {@code io.sandboxes.pool-member} label, read through the Docker CLI. Found by
   * the id in its name: a claimed member is renamed from {@code sandboxes-pool-<id>} to
   * {@code sandboxes-<id>} in the background, so either name may be current.
   */
  static String poolLabel(String sandboxId) {
    try {
      Process p = new ProcessBuilder("docker", "ps", "--all", "--filter", "name=" + sandboxId, "--format",
          "{{.Label \"io.sandboxes.pool-member\"}}").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("docker inspect: %s", out).isZero();
      return out;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  @DisplayName("an 8-way parallel suite, a sandbox per test, takes every sandbox from the warm pool the extension sized for it")
  void everyCreateWarm() {
    assumeTrue(System.getenv("E2B_API_KEY") == null, "the suite would run on E2B's cloud");
    LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(EightWayCase.class))
        .configurationParameters(Map.of(
            "junit.jupiter.execution.parallel.enabled", "true",
            "junit.jupiter.execution.parallel.mode.default", "concurrent",
            "junit.jupiter.execution.parallel.config.strategy", "fixed",
            "junit.jupiter.execution.parallel.config.fixed.parallelism", "8",
            E2BSandbox.RUNTIME_REQUIRED_PROPERTY_NAME, "true"))
        .build();
    SummaryGeneratingListener summary = new SummaryGeneratingListener();
    List<String> warmReports = new CopyOnWriteArrayList<>();
    TestExecutionListener reports = new TestExecutionListener() {
      @Override
      public void reportingEntryPublished(TestIdentifier id, ReportEntry entry) {
        String v = entry.getKeyValuePairs().get("e2b.warmPool");
        if (v != null) {
          warmReports.add(v);
        }
      }
    };
    poolLabels.clear();
    // a server found running keeps its own pool: this run starts its own
    String reuse = System.getProperty("sandboxes.local.reuse");
    System.setProperty("sandboxes.local.reuse", "false");
    try {
      LauncherFactory.create().execute(request, summary, reports);
    } finally {
      if (reuse == null) {
        System.clearProperty("sandboxes.local.reuse");
      } else {
        System.setProperty("sandboxes.local.reuse", reuse);
      }
    }
    assertThat(summary.getSummary().getFailures()).as("failures").isEmpty();
    assertThat(summary.getSummary().getTestsSucceededCount()).isEqualTo(12);
    assertThat(warmReports).as("the extension waited for the pool it asked for").singleElement().asString()
        .startsWith("ready in").endsWith("for 12 sandboxes");
    assertThat(poolLabels).as("every test's sandbox, by its container's pool label").hasSize(12)
        .allSatisfy((id, label) -> assertThat(label).as("sandbox %s", id).isEqualTo("true"));
  }
}
