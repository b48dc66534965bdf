package io.sandboxes.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.sandboxes.Sandbox;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;

/** The README's JUnit snippet, run through the test kit (its class is a nested fixture). */
class ReadmeJUnitSnippetTest {

  // snippet:junit
  static class BuildTest {
    @E2BSandbox(allowOut = "pypi.org", timeoutSeconds = 600)
    Sandbox sandbox;

    @Test
    void runsPython() {
      assertThat(sandbox.exec("python3 -c 'print(1 + 1)'").stdout()).isEqualTo("2\n");
    }
  }
  // end

  @Test
  @DisplayName("README: the @E2BSandbox snippet passes, egress verified first")
  void snippetRuns() {
    EngineTestKit.engine("junit-jupiter").selectors(selectClass(BuildTest.class)).execute()
        .testEvents().assertStatistics(s -> s.succeeded(1).failed(0));
  }
}
