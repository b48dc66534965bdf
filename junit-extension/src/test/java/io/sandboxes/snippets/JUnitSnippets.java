package io.sandboxes.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.Sandbox;
import io.sandboxes.junit.E2BSandbox;
import org.junit.jupiter.api.Test;

/**
 * The code example in the JUnit extension's Javadoc. The {@code {@snippet class=... region=...}}
 * of {@link E2BSandbox} shows a region of this file, and javadoc fails when its inline copy
 * differs from the region; this file is compiled with the tests, so an example that uses an
 * annotation element that does not exist fails the build. {@code BuildTest} is an inner class
 * (neither static nor {@code @Nested}), so no engine runs it: its test installs from pypi.org.
 * The README's JUnit example is run, by {@code ReadmeJUnitSnippetTest}.
 */
final class JUnitSnippets {
  private JUnitSnippets() {}

  // @start region="e2b-sandbox" :
  class BuildTest {
    @E2BSandbox(allowOut = "pypi.org", timeoutSeconds = 600)
    Sandbox sandbox;                       // a fresh sandbox per test method

    @Test
    void installs() {
      assertThat(sandbox.exec("pip install requests").exitCode()).isZero();
    }
  }
  // @end
}
