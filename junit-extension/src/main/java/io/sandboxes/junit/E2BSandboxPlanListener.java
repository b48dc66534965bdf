package io.sandboxes.junit;

import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Counts, before a run's first test, how many sandboxes its tests will ask for through
 * {@link E2BSandbox}, so that the local runtime the extension starts keeps that many ready (a warm
 * pool, up to {@link SandboxDemand#MAX_POOL}) and every create of the run takes a pre-started
 * sandbox. The JUnit Platform launcher finds it on the class path by itself; it looks at the test
 * plan only, and changes nothing in it.
 *
 * <p>A test that is a template of others (parameterized, repeated) counts once: its invocations
 * are not in the plan before it runs.
 *
 * @since 0.1
 */
public final class E2BSandboxPlanListener implements TestExecutionListener {
  /** The demands of the plans under way in this JVM, innermost last (a launcher run from a test nests). */
  private static final Deque<Integer> PLANS = new ArrayDeque<>();

  /** Needed by the launcher's service loader. */
  public E2BSandboxPlanListener() {}

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    int demand = 0;
    Set<Class<?>> staticFieldsSeen = SandboxDemand.staticFieldsSeen();
    for (TestIdentifier root : plan.getRoots()) {
      for (TestIdentifier id : plan.getDescendants(root)) {
        // before the run only declared methods are in the plan (a parameterized test's
        // invocations are added as it runs), so no two of these are the same method
        if (id.getSource().orElse(null) instanceof MethodSource m) {
          demand += demandOf(m, staticFieldsSeen);
        }
      }
    }
    synchronized (PLANS) {
      PLANS.addLast(demand);
      SandboxDemand.set(demand);
    }
  }

  @Override
  public void testPlanExecutionFinished(TestPlan plan) {
    synchronized (PLANS) {
      PLANS.pollLast();
      SandboxDemand.set(PLANS.isEmpty() ? 0 : PLANS.peekLast());
    }
  }

  private static int demandOf(MethodSource source, Set<Class<?>> staticFieldsSeen) {
    try {
      Class<?> type = source.getJavaClass();
      Method method = source.getJavaMethod();
      return SandboxDemand.of(type, method, staticFieldsSeen);
    } catch (RuntimeException | LinkageError e) {
      return 0; // a class or method that does not load here asks for nothing we can count
    }
  }
}
