package io.sandboxes.local.internal.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The shapes of a build's log lines, each as E2B's template builder prints it (its orchestrator's
 * build phases and the command runner that streams a step's output).
 */
class BuildLinesTest {
  private static final String HASH = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

  @Test
  @DisplayName("a layer's heading: [prefix] text [hash], CACHED before it when taken as it is; all a step's arguments joined by spaces")
  void headings() {
    assertThat(BuildLines.heading(false, BuildLines.step(2, 5), BuildLines.text("RUN", List.of("apt-get update", "root")), HASH))
        .isEqualTo("[builder 2/5] RUN apt-get update root [" + HASH + "]");
    assertThat(BuildLines.heading(true, BuildLines.step(1, 2), BuildLines.text("ENV", List.of("A", "b c")), HASH))
        .isEqualTo("CACHED [builder 1/2] ENV A b c [" + HASH + "]");
    assertThat(BuildLines.heading(false, BuildLines.step(3, 3), BuildLines.text("COPY", List.of("app", "/opt/app/", "", "")), HASH))
        .as("a COPY's empty user and mode stay as spaces, as E2B joins them").isEqualTo("[builder 3/3] COPY app /opt/app/   [" + HASH + "]");
    assertThat(BuildLines.heading(true, BuildLines.BASE, "FROM TEMPLATE base", HASH)).isEqualTo("CACHED [base] FROM TEMPLATE base [" + HASH + "]");
  }

  @Test
  @DisplayName("a command's line: [prefix] [stdout]: line or [stderr], trimmed; a blank line is left out")
  void output() {
    assertThat(BuildLines.output("builder 1/1", false, "  hello \r")).isEqualTo("[builder 1/1] [stdout]: hello");
    assertThat(BuildLines.output("builder 1/1", true, "oops")).isEqualTo("[builder 1/1] [stderr]: oops");
    assertThat(BuildLines.output("builder 1/1", false, " \t ")).isNull();
  }

  @Test
  @DisplayName("the last line: Build finished, took the time cut to whole seconds as Go writes a duration; or Build failed: why")
  void lastLine() {
    assertThat(BuildLines.finished(Duration.ofMillis(400))).isEqualTo("Build finished, took 0s");
    assertThat(BuildLines.finished(Duration.ofMillis(42_900))).isEqualTo("Build finished, took 42s");
    assertThat(BuildLines.finished(Duration.ofSeconds(65))).isEqualTo("Build finished, took 1m5s");
    assertThat(BuildLines.finished(Duration.ofSeconds(7203))).isEqualTo("Build finished, took 2h0m3s");
    assertThat(BuildLines.failed("step 2 failed with exit code 3")).isEqualTo("Build failed: step 2 failed with exit code 3");
  }
}
