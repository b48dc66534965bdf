package io.sandboxes.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Provisions a sandbox for a test and injects it into a field or parameter of type
 * {@link io.sandboxes.Sandbox} (or {@link io.sandboxes.e2b.LiveSandbox}).
 *
 * {@snippet class=io.sandboxes.snippets.JUnitSnippets region=e2b-sandbox :
 * class BuildTest {
 *   @E2BSandbox(allowOut = "pypi.org", timeoutSeconds = 600)
 *   Sandbox sandbox;                       // a fresh sandbox per test method
 *
 *   @Test
 *   void installs() {
 *     assertThat(sandbox.exec("pip install requests").exitCode()).isZero();
 *   }
 * }
 * }
 *
 * <p>Before the first sandbox of a run, the extension verifies egress once with the provider's
 * {@code verifyEgress} and keeps the verdict for the run. By default a verdict other than
 * {@code FILTERED} fails every test that asks for a sandbox, with the verdict's detail and
 * remediation; see {@link #egress()}.
 *
 * <p>Sandboxes come from {@code Sandboxes.auto()}: E2B's cloud when {@code E2B_API_KEY} is set,
 * the local runtime otherwise. When neither can serve (no key and no Docker engine), the tests
 * that ask for a sandbox are disabled with a reason saying so, unless
 * {@link #RUNTIME_REQUIRED_PROPERTY_NAME} asks for failure instead. A static field (or a {@code @BeforeAll} parameter) gets one
 * sandbox for the class; an instance field or a test parameter gets one per test. Usable as a
 * meta-annotation for shorthand annotations.
 *
 * @since 0.1
 */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(E2BSandboxExtension.class)
public @interface E2BSandbox {

  /** Configuration parameter: the cleanup mode used where an annotation says {@link CleanupMode#DEFAULT}. */
  String DEFAULT_CLEANUP_MODE_PROPERTY_NAME = "e2b.sandbox.cleanup.mode.default";

  /** Configuration parameter: the egress policy used where an annotation says {@link EgressPolicy#DEFAULT}. */
  String DEFAULT_EGRESS_POLICY_PROPERTY_NAME = "e2b.sandbox.egress.policy.default";

  /**
   * Configuration parameter: the class name of a {@code Supplier<SandboxClient>} to take sandboxes
   * from instead of {@code Sandboxes.auto()}.
   */
  String CLIENT_SUPPLIER_PROPERTY_NAME = "e2b.sandbox.client.supplier";

  /**
   * Configuration parameter: {@code true} to fail, rather than skip, the tests that ask for a
   * sandbox when nothing can provide one (no {@code E2B_API_KEY} and no Docker engine). Default
   * {@code false}: such tests are disabled, with a reason that says what is missing.
   */
  String RUNTIME_REQUIRED_PROPERTY_NAME = "e2b.sandbox.runtime.required";

  /**
   * The template the sandbox boots from.
   *
   * @return a template id or alias; {@code base} by default
   */
  String template() default "base";

  /**
   * How long the sandbox lives before the server ends it.
   *
   * @return the sandbox's lifetime in seconds; 300 by default
   */
  long timeoutSeconds() default 300;

  /**
   * Environment variables every process in the sandbox gets.
   *
   * @return environment variables, each {@code NAME=value}
   */
  String[] env() default {};

  /**
   * The sandbox's allow-list; everything else is denied.
   *
   * @return destinations the sandbox may reach (domains, {@code *.} wildcards, IPs, CIDRs); none by default
   */
  String[] allowOut() default {};

  /**
   * Named volumes to mount in the sandbox.
   *
   * @return volumes to mount, each {@code name:/mount/path}; a missing volume is created
   */
  String[] volumes() default {};

  /**
   * When the sandbox is destroyed.
   *
   * @return the cleanup mode; {@link CleanupMode#DEFAULT} defers to
   *     {@link #DEFAULT_CLEANUP_MODE_PROPERTY_NAME}
   */
  CleanupMode cleanup() default CleanupMode.DEFAULT;

  /**
   * What an egress verdict other than filtered does to the tests that ask for a sandbox.
   *
   * @return the egress policy; {@link EgressPolicy#DEFAULT} defers to
   *     {@link #DEFAULT_EGRESS_POLICY_PROPERTY_NAME}
   */
  EgressPolicy egress() default EgressPolicy.DEFAULT;

  /** When a test's sandbox is destroyed. */
  enum CleanupMode {
    /** Whatever {@link #DEFAULT_CLEANUP_MODE_PROPERTY_NAME} says; {@link #ALWAYS} if nothing. */
    DEFAULT,
    /** Always, when its scope ends. */
    ALWAYS,
    /** Only when its tests passed: a failed test keeps its sandbox for inspection (its id is reported). */
    ON_SUCCESS,
    /** Never: it lives until its own timeout. */
    NEVER
  }

  /** What a verdict other than filtered does to the tests that ask for a sandbox. */
  enum EgressPolicy {
    /** Whatever {@link #DEFAULT_EGRESS_POLICY_PROPERTY_NAME} says; {@link #REQUIRE_FILTERED} if nothing. */
    DEFAULT,
    /** Fail them, quoting the verdict's detail and remediation. */
    REQUIRE_FILTERED,
    /** Let them run, and report the verdict. */
    WARN,
    /** Do not verify at all. */
    SKIP
  }
}
