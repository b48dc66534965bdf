package io.sandboxes.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.sandboxes.Sandbox;
import io.sandboxes.dsl.Sandboxes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * What the extension does on a machine where nothing can provide a sandbox. Such a machine is
 * made for real: a child JVM runs in its own mount namespace with the Docker socket covered by
 * {@code /dev/null} and no {@code E2B_API_KEY}, and runs the fixtures there through the test kit.
 */
class NoRuntimeTest {

  static class FieldTestCase {
    @E2BSandbox
    Sandbox sandbox;

    @Test
    void wantsSandbox() {
      System.out.println("ran FieldTestCase");
    }
  }

  static class ParameterTestCase {
    @Test
    void wantsSandbox(@E2BSandbox Sandbox sandbox) {
      System.out.println("ran ParameterTestCase");
    }

    @Test
    void needsNothing() {
      System.out.println("ran needsNothing");
    }
  }

  /** Runs in the child JVM: executes the fixtures and prints one line per outcome. */
  public static void main(String[] args) {
    System.out.println("reason " + Sandboxes.unavailableReason().orElse("(none)"));
    print("default", run(Map.of()));
    print("required", run(Map.of(E2BSandbox.RUNTIME_REQUIRED_PROPERTY_NAME, "true")));
  }

  private static EngineExecutionResults run(Map<String, String> config) {
    var kit = EngineTestKit.engine("junit-jupiter").selectors(selectClass(FieldTestCase.class), selectClass(ParameterTestCase.class));
    config.forEach(kit::configurationParameter);
    return kit.execute();
  }

  private static void print(String label, EngineExecutionResults r) {
    for (Event e : r.allEvents().skipped().list()) {
      System.out.println(label + " skipped " + e.getTestDescriptor().getDisplayName() + ": " + e.getPayload(String.class).orElse(""));
    }
    for (Event e : r.allEvents().failed().list()) {
      System.out.println(label + " failed " + e.getTestDescriptor().getDisplayName() + ": "
          + e.getPayload(org.junit.platform.engine.TestExecutionResult.class).flatMap(x -> x.getThrowable()).map(Throwable::getMessage).orElse(""));
    }
    for (Event e : r.testEvents().succeeded().list()) {
      System.out.println(label + " passed " + e.getTestDescriptor().getDisplayName());
    }
  }

  @Test
  @DisplayName("with no key and no Docker engine, tests that ask for a sandbox are skipped with the reason, others run; required=true fails them instead")
  void skipsWithoutAnyRuntime() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "hiding the Docker socket needs root (a private mount namespace)");
    Path socket = Path.of("/var/run/docker.sock");
    assertThat(socket).as("this test hides a real Docker socket").exists();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of("unshare", "-m", "--", "sh", "-c",
        "mount --bind /dev/null /var/run/docker.sock && exec \"$0\" \"$@\"",
        java, "-cp", System.getProperty("java.class.path"), NoRuntimeTest.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("E2B_API_KEY");
    pb.environment().remove("DOCKER_HOST");
    Process p = pb.start();
    String out;
    try (var in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();

    String why = "@E2BSandbox: nothing here can provide a sandbox: E2B_API_KEY is not set and the local runtime cannot run: "
        + "no Docker engine is reachable";
    assertThat(lines(out, "reason ")).singleElement().asString().startsWith("reason E2B_API_KEY is not set");
    assertThat(lines(out, "default skipped ")).hasSize(2)
        .anySatisfy(l -> assertThat(l).startsWith("default skipped NoRuntimeTest$FieldTestCase: " + why))
        .anySatisfy(l -> assertThat(l).startsWith("default skipped wantsSandbox(Sandbox): " + why));
    assertThat(lines(out, "default passed ")).containsExactly("default passed needsNothing()");
    assertThat(lines(out, "default failed ")).isEmpty();
    assertThat(out).doesNotContain("ran FieldTestCase", "ran ParameterTestCase");

    assertThat(lines(out, "required skipped ")).isEmpty();
    assertThat(lines(out, "required failed ")).hasSize(2)
        .allSatisfy(l -> assertThat(l).contains(why).contains(E2BSandbox.RUNTIME_REQUIRED_PROPERTY_NAME + " = true"));
    assertThat(lines(out, "required passed ")).containsExactly("required passed needsNothing()");
  }

  private static List<String> lines(String out, String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).toList();
  }

  @Test
  @DisplayName("with Docker here, nothing is reported missing")
  void runtimeHere() {
    assertThat(Sandboxes.unavailableReason()).isEmpty();
  }
}
