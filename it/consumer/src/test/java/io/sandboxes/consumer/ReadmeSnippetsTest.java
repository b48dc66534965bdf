package io.sandboxes.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Runs the README's Java snippets, which the build generated from README.md
 * ({@code ReadmeCodeSnippets} and {@code ReadmeTestSnippets}, from src/build/ReadmeSnippets.java).
 */
class ReadmeSnippetsTest {

  /** What each code snippet of the README prints. A snippet added to the README needs its line here. */
  private static final Map<String, String> PRINTS = Map.ofEntries(
      Map.entry("quickstart", "42 (exit 0)\n"),
      Map.entry("live", "hello from demo\n"),
      Map.entry("lifecycle", "true PAUSED\nkept\ntrue\n"),
      Map.entry("follow", "step 1\nstep 2\nstep 3\ntimed out after: compiling\n"),
      Map.entry("commands", "true\ngot hello\nexit 0\nfalse\n"),
      Map.entry("files", "a.csv 8 user\nb.csv 8 user\nbig.bin 1048576 user\n1048576 bytes read\nfalse DIR\n"),
      Map.entry("pty", "true exit 0\n"),
      Map.entry("network", "[0.0.0.0/0]\n[pypi.org, *.pythonhosted.org]\n"),
      Map.entry("git", "1 untracked\n[feature, main]\norigin/feature\n"),
      Map.entry("templates", "READY true\n"),
      Map.entry("provider", "1\n"),
      Map.entry("accounts", "RUNNING\nrefused: HTTP 401\n"),
      Map.entry("local-options", "started cold\n"),
      Map.entry("code-interpreter", "area:\n12.566\nZeroDivisionError\nchart: png\n"),
      Map.entry("langchain4j", "5050\nexit code: 0\nstdout:\nhi from alice\n\n"),
      Map.entry("spring-ai", "exit code: 0\nstdout:\n1024\n\n"),
      Map.entry("mcp", "run_command run_python read_file write_file list_folder \n"),
      Map.entry("template", "hello from a template of my own\ndemo\n"));

  @Test
  void everyCodeSnippetOfTheReadmeHasAnExpectation() {
    assertThat(ReadmeCodeSnippets.ALL.keySet())
        .as("the README's code snippets, and the names in it/consumer's ReadmeSnippetsTest.PRINTS")
        .isNotEmpty().containsExactlyInAnyOrderElementsOf(PRINTS.keySet());
  }

  @TestFactory
  Stream<DynamicTest> codeSnippetsPrintWhatTheReadmeSays() {
    return ReadmeCodeSnippets.ALL.entrySet().stream().map(e -> dynamicTest("README snippet " + e.getKey(), () -> {
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      e.getValue().run(new PrintStream(printed, true, StandardCharsets.UTF_8));
      assertThat(printed.toString(StandardCharsets.UTF_8)).as("what README snippet " + e.getKey() + " printed")
          .isEqualTo(PRINTS.get(e.getKey()));
    }));
  }

  @TestFactory
  Stream<DynamicTest> testSnippetsPass() {
    assertThat(ReadmeTestSnippets.CLASSES).as("the README's test classes").isNotEmpty();
    return ReadmeTestSnippets.CLASSES.stream().map(type -> dynamicTest("README test class " + type.getSimpleName(), () -> {
      EngineExecutionResults results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(type)).execute();
      List<Throwable> failures = results.allEvents().failed().stream()
          .map(ev -> ev.getPayload(TestExecutionResult.class).flatMap(TestExecutionResult::getThrowable)
              .orElseGet(() -> new AssertionError(ev.getTestDescriptor().getDisplayName() + " failed")))
          .toList();
      if (!failures.isEmpty()) {
        AssertionError e = new AssertionError(type.getSimpleName() + ": " + failures.size() + " failed");
        failures.forEach(e::addSuppressed);
        throw e;
      }
      Events tests = results.testEvents();
      assertThat(tests.skipped().count() + tests.aborted().count()).as("skipped or aborted tests").isZero();
      assertThat(tests.succeeded().count()).as("tests passed").isPositive().isEqualTo(tests.started().count());
    }));
  }
}
