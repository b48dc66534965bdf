package io.sandboxes.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.local.LocalServer;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * The extension, run through the JUnit Platform test kit on nested fixture classes (Surefire does
 * not run nested classes on its own), against real local servers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class E2BSandboxExtensionTest {
  static LocalServer filtered;
  static LocalServer open;
  static LocalServer witnessDown;
  static final List<String> seen = new CopyOnWriteArrayList<>();

  @BeforeAll
  void servers() {
    filtered = LocalServer.builder().keepSandboxesOnClose(false).build().start();
    open = LocalServer.builder().openEgressForTesting(true).build().start();
    witnessDown = LocalServer.builder().allowedWitnessForTesting(false).build().start();
  }

  @AfterAll
  void stop() {
    filtered.close();
    open.close();
    witnessDown.close();
  }

  static SandboxClient clientFor(LocalServer s) {
    return Sandboxes.at(s.apiUrl(), s.sandboxUrl(), s.apiKey());
  }

  /** Sandboxes from the egress-enforcing server. */
  public static final class FilteredClient implements Supplier<SandboxClient> {
    @Override
    public SandboxClient get() {
      return clientFor(filtered);
    }
  }

  /** Sandboxes from a deliberately open server. */
  public static final class OpenClient implements Supplier<SandboxClient> {
    @Override
    public SandboxClient get() {
      return clientFor(open);
    }
  }

  /** Sandboxes from a server whose allowed witness is down. */
  public static final class WitnessDownClient implements Supplier<SandboxClient> {
    @Override
    public SandboxClient get() {
      return clientFor(witnessDown);
    }
  }

  private static EngineExecutionResults run(Class<?> fixture, Class<?> client, Map<String, String> config) {
    seen.clear();
    var kit = EngineTestKit.engine("junit-jupiter").selectors(selectClass(fixture))
        .configurationParameter(E2BSandbox.CLIENT_SUPPLIER_PROPERTY_NAME, client.getName());
    config.forEach(kit::configurationParameter);
    return kit.execute();
  }

  private static List<String> reported(EngineExecutionResults r, String key) {
    return r.allEvents().reportingEntryPublished().stream()
        .map(e -> e.getPayload(org.junit.platform.engine.reporting.ReportEntry.class).orElseThrow().getKeyValuePairs().get(key))
        .filter(v -> v != null).toList();
  }

  private static boolean exists(String id) {
    try (SandboxClient c = clientFor(filtered)) {
      return c.provider().describe(id).isPresent();
    }
  }

  // ---- fixtures ----

  static class FieldInjectionTestCase {
    @E2BSandbox(env = "GREETING=hi")
    Sandbox sandbox;

    @Test
    void first() {
      seen.add(sandbox.id());
      assertThat(sandbox.exec("echo $GREETING").stdout()).isEqualTo("hi\n");
    }

    @Test
    void second() {
      seen.add(sandbox.id());
    }
  }

  static class ClassScopeTestCase {
    @E2BSandbox
    static Sandbox shared;

    static String fromBeforeAll;

    @BeforeAll
    static void setUp(@E2BSandbox Sandbox viaParameter) {
      fromBeforeAll = viaParameter.id();
    }

    @Test
    void first(@E2BSandbox Sandbox perTest) {
      seen.add(shared.id());
      seen.add("param:" + perTest.id());
      seen.add("beforeAll:" + fromBeforeAll);
    }

    @Test
    void second() {
      seen.add(shared.id());
    }
  }

  static class ParallelTestCase {
    @E2BSandbox
    Sandbox sandbox;

    @Test
    void a() {
      seen.add(sandbox.exec("echo a").stdout() + sandbox.id());
    }

    @Test
    void b() {
      seen.add(sandbox.exec("echo b").stdout() + sandbox.id());
    }

    @Test
    void c() {
      seen.add(sandbox.exec("echo c").stdout() + sandbox.id());
    }

    @Test
    void d() {
      seen.add(sandbox.exec("echo d").stdout() + sandbox.id());
    }
  }

  static class EgressTestCase {
    @Test
    void wantsSandbox(@E2BSandbox Sandbox sandbox) {
      seen.add(sandbox.id());
    }
  }

  static class WarnTestCase {
    @Test
    void wantsSandbox(@E2BSandbox(egress = E2BSandbox.EgressPolicy.WARN) Sandbox sandbox) {
      seen.add(sandbox.id());
    }
  }

  static class CleanupTestCase {
    @Test
    void alwaysFails(@E2BSandbox(cleanup = E2BSandbox.CleanupMode.ALWAYS) Sandbox sandbox) {
      seen.add("always:" + sandbox.id());
      throw new AssertionError("boom");
    }

    @Test
    void onSuccessFails(@E2BSandbox(cleanup = E2BSandbox.CleanupMode.ON_SUCCESS) Sandbox sandbox) {
      seen.add("onSuccessFailed:" + sandbox.id());
      throw new AssertionError("boom");
    }

    @Test
    void onSuccessPasses(@E2BSandbox(cleanup = E2BSandbox.CleanupMode.ON_SUCCESS) Sandbox sandbox) {
      seen.add("onSuccessPassed:" + sandbox.id());
    }

    @Test
    void never(@E2BSandbox(cleanup = E2BSandbox.CleanupMode.NEVER) Sandbox sandbox) {
      seen.add("never:" + sandbox.id());
    }
  }

  /** A shorthand annotation built on @E2BSandbox. */
  @Target({java.lang.annotation.ElementType.FIELD, java.lang.annotation.ElementType.PARAMETER})
  @Retention(RetentionPolicy.RUNTIME)
  @E2BSandbox(env = "LANG=C.UTF-8", timeoutSeconds = 120)
  @interface Utf8Sandbox {}

  static class ShorthandTestCase {
    @Utf8Sandbox
    Sandbox sandbox;

    @Test
    void usesShorthand() {
      seen.add(sandbox.exec("echo $LANG").stdout());
    }
  }

  static class FinalFieldTestCase {
    @E2BSandbox
    final Sandbox sandbox = null;

    @Test
    void neverRuns() {
    }
  }

  static class WrongTypeTestCase {
    @E2BSandbox
    String notASandbox;

    @Test
    void neverRuns() {
    }
  }

  // ---- tests ----

  @Nested
  @DisplayName("when sandboxes are injected")
  class Injection {
    @Test
    @DisplayName("then an instance field gets a fresh, working sandbox per test, with the annotation's env")
    void fieldInjection() {
      EngineExecutionResults r = run(FieldInjectionTestCase.class, FilteredClient.class, Map.of());
      r.testEvents().assertStatistics(s -> s.started(2).succeeded(2));
      assertThat(seen).hasSize(2).doesNotHaveDuplicates();
      assertThat(reported(r, "e2b.sandbox.id")).containsAll(seen);
      assertThat(reported(r, "e2b.sandbox.startMillis")).allMatch(v -> v.matches("\\d+"));
      assertThat(seen).noneMatch(EgressExtensionSupport::exists);
    }

    @Test
    @DisplayName("then a static field is one sandbox for the class; @BeforeAll and test parameters get their own")
    void classScope() {
      EngineExecutionResults r = run(ClassScopeTestCase.class, FilteredClient.class, Map.of());
      r.testEvents().assertStatistics(s -> s.succeeded(2));
      List<String> shared = seen.stream().filter(x -> !x.contains(":")).distinct().toList();
      assertThat(shared).hasSize(1);
      String param = seen.stream().filter(x -> x.startsWith("param:")).findFirst().orElseThrow().substring(6);
      String beforeAll = seen.stream().filter(x -> x.startsWith("beforeAll:")).findFirst().orElseThrow().substring(10);
      assertThat(List.of(shared.get(0), param, beforeAll)).doesNotHaveDuplicates();
    }

    @Test
    @DisplayName("then a shorthand annotation built on @E2BSandbox works")
    void shorthand() {
      run(ShorthandTestCase.class, FilteredClient.class, Map.of()).testEvents().assertStatistics(s -> s.succeeded(1));
      assertThat(seen).containsExactly("C.UTF-8\n");
    }

    @Test
    @DisplayName("then a final field fails with a message naming it, and no sandbox is made")
    void finalField() {
      // one bad field per test class: with both in one class, either check alone would pass
      EngineExecutionResults r = run(FinalFieldTestCase.class, FilteredClient.class, Map.of());
      r.testEvents().assertThatEvents().haveExactly(1, event(test("neverRuns"),
          finishedWithFailure(message(m -> m.contains("FinalFieldTestCase.sandbox must not be final")))));
      assertThat(seen).isEmpty();
    }

    @Test
    @DisplayName("then a field of the wrong type fails with a message naming it and the types it may have")
    void wrongType() {
      EngineExecutionResults r = run(WrongTypeTestCase.class, FilteredClient.class, Map.of());
      r.testEvents().assertThatEvents().haveExactly(1, event(test("neverRuns"),
          finishedWithFailure(message(m -> m.contains("WrongTypeTestCase.notASandbox must be of type io.sandboxes.Sandbox or"
              + " io.sandboxes.e2b.LiveSandbox, not java.lang.String")))));
      assertThat(seen).isEmpty();
    }

    @Test
    @DisplayName("then tests run in parallel each get their own sandbox")
    void parallel() {
      EngineExecutionResults r = run(ParallelTestCase.class, FilteredClient.class, Map.of(
          "junit.jupiter.execution.parallel.enabled", "true",
          "junit.jupiter.execution.parallel.mode.default", "concurrent",
          "junit.jupiter.execution.parallel.config.strategy", "fixed",
          "junit.jupiter.execution.parallel.config.fixed.parallelism", "4"));
      r.testEvents().assertStatistics(s -> s.succeeded(4));
      assertThat(seen).hasSize(4);
      assertThat(seen.stream().map(x -> x.substring(2)).distinct()).hasSize(4);
      assertThat(seen.stream().map(x -> x.substring(0, 1)).sorted()).containsExactly("a", "b", "c", "d");
    }
  }

  @Nested
  @DisplayName("when egress is verified before the first sandbox")
  class Egress {
    @Test
    @DisplayName("then a filtered verdict lets tests run")
    void filtered() {
      run(EgressTestCase.class, FilteredClient.class, Map.of()).testEvents().assertStatistics(s -> s.succeeded(1));
    }

    @Test
    @DisplayName("then an open verdict fails the test, quoting the detail and the remediation")
    void open() {
      EngineExecutionResults r = run(EgressTestCase.class, OpenClient.class, Map.of());
      r.testEvents().assertThatEvents().haveExactly(1, event(test("wantsSandbox"), finishedWithFailure(message(m ->
          m.contains("verifyEgress said OPEN") && m.contains("Non-allow-listed egress was reachable") && m.contains("Remediation:")))));
      assertThat(seen).isEmpty();
    }

    @Test
    @DisplayName("then an inconclusive verdict (the allowed witness down) fails the test too")
    void inconclusive() {
      EngineExecutionResults r = run(EgressTestCase.class, WitnessDownClient.class, Map.of());
      r.testEvents().assertThatEvents().haveExactly(1, event(test("wantsSandbox"), finishedWithFailure(message(m ->
          m.contains("verifyEgress said INCONCLUSIVE") && m.contains("no network")))));
    }

    @Test
    @DisplayName("then WARN on the annotation, or the configuration parameter, lets the test run and reports the verdict")
    void warn() {
      EngineExecutionResults byAnnotation = run(WarnTestCase.class, OpenClient.class, Map.of());
      byAnnotation.testEvents().assertStatistics(s -> s.succeeded(1));
      assertThat(reported(byAnnotation, "e2b.egress")).singleElement().satisfies(v -> assertThat(v).contains("OPEN"));
      run(EgressTestCase.class, OpenClient.class, Map.of(E2BSandbox.DEFAULT_EGRESS_POLICY_PROPERTY_NAME, "warn"))
          .testEvents().assertStatistics(s -> s.succeeded(1));
    }
  }

  @Nested
  @DisplayName("when a test ends")
  class Cleanup {
    @Test
    @DisplayName("then ALWAYS destroys, ON_SUCCESS keeps a failed test's sandbox (reported) and destroys a passing one's, NEVER keeps")
    void modes() {
      // what the extension prints on stderr, which build tools show where they do not show report entries
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      java.io.PrintStream original = System.err;
      EngineExecutionResults r;
      System.setErr(new java.io.PrintStream(new java.io.OutputStream() {
        @Override
        public void write(int b) {
          original.write(b);
          err.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          original.write(b, off, len);
          err.write(b, off, len);
        }
      }, true, java.nio.charset.StandardCharsets.UTF_8));
      try {
        r = run(CleanupTestCase.class, FilteredClient.class, Map.of());
      } finally {
        System.setErr(original);
      }
      r.testEvents().assertStatistics(s -> s.succeeded(2).failed(2));
      String always = id("always:");
      String keptFailed = id("onSuccessFailed:");
      String passed = id("onSuccessPassed:");
      String never = id("never:");
      assertThat(exists(always)).isFalse();
      assertThat(exists(passed)).isFalse();
      assertThat(exists(keptFailed)).isTrue();
      assertThat(exists(never)).isTrue();
      assertThat(reported(r, "e2b.sandbox.kept")).containsExactlyInAnyOrder(keptFailed, never);
      List<String> printed = err.toString(java.nio.charset.StandardCharsets.UTF_8).lines()
          .filter(l -> l.startsWith("[@E2BSandbox] kept sandbox ")).toList();
      assertThat(printed).hasSize(2);
      assertThat(printed).anySatisfy(l -> assertThat(l).startsWith("[@E2BSandbox] kept sandbox " + keptFailed + " of ")
          .contains("(cleanup = ON_SUCCESS, and it failed, deadline 20")
          .contains("): Sandboxes.at(..).connect(\"" + keptFailed + "\") with the same server URLs (" + filtered.apiUrl() + ")"));
      assertThat(printed).anySatisfy(l -> assertThat(l).startsWith("[@E2BSandbox] kept sandbox " + never + " of ")
          .contains("(cleanup = NEVER, deadline "));
      assertThat(reported(r, "e2b.sandbox.kept.howToReach")).hasSize(2).allMatch(h -> h.contains("connect("));
      try (SandboxClient c = clientFor(filtered)) {
        c.provider().destroy(keptFailed);
        c.provider().destroy(never);
      }
    }

    @Test
    @DisplayName("then the configuration parameter sets the default mode")
    void defaultMode() {
      EngineExecutionResults r = run(FieldInjectionTestCase.class, FilteredClient.class,
          Map.of(E2BSandbox.DEFAULT_CLEANUP_MODE_PROPERTY_NAME, "never"));
      r.testEvents().assertStatistics(s -> s.succeeded(2));
      assertThat(seen).allMatch(EgressExtensionSupport::exists);
      try (SandboxClient c = clientFor(filtered)) {
        seen.forEach(c.provider()::destroy);
      }
    }

    @Test
    @DisplayName("then sandboxes are destroyed when JUnit closes only CloseableResource values, as Jupiter 5.10 to 5.12 do")
    void closeableResourcePath() {
      // JUnit 6 closes a stored AutoCloseable first; with this switch off it closes only what
      // implements CloseableResource, which is all that Jupiter before 5.13 ever closes
      EngineExecutionResults r = run(FieldInjectionTestCase.class, FilteredClient.class,
          Map.of("junit.jupiter.extensions.store.close.autocloseable.enabled", "false"));
      r.testEvents().assertStatistics(s -> s.succeeded(2));
      assertThat(seen).hasSize(2).noneMatch(EgressExtensionSupport::exists);
    }

    private String id(String prefix) {
      return seen.stream().filter(x -> x.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length());
    }
  }

  /** Lets nested classes ask whether a sandbox still exists. */
  static final class EgressExtensionSupport {
    private EgressExtensionSupport() {}

    static boolean exists(String id) {
      return E2BSandboxExtensionTest.exists(id);
    }
  }
}
