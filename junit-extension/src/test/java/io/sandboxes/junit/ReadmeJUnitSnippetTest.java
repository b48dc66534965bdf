package io.sandboxes.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.sandboxes.Sandbox;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * The README's JUnit snippet, run through the test kit (its class is a nested fixture). It uses
 * JUnit's own assertions, so a reader needs nothing but JUnit and {@code sandboxes-junit}.
 */
class ReadmeJUnitSnippetTest {

  // snippet:junit
  static class BuildTest {
    @E2BSandbox(allowOut = "pypi.org", timeoutSeconds = 600)
    Sandbox sandbox;

    @Test
    void runsPython() {
      assertEquals("2\n", sandbox.exec("python3 -c 'print(1 + 1)'").stdout());
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
