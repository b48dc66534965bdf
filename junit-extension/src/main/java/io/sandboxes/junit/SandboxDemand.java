package io.sandboxes.junit;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;

/**
 * How many sandboxes of the {@code base} template the tests of the run under way will ask for, as
 * counted from its test plan by {@link E2BSandboxPlanListener} before the first test runs: the
 * size of warm pool that gives every one of them a pre-started sandbox. Only {@code base} is
 * counted (a pool of a template the run builds itself would fail until it exists), and only
 * sandboxes without volumes (a sandbox with a volume mount never comes from the pool).
 */
final class SandboxDemand {
  /** The largest pool the extension asks for on its own: about 40 MiB of memory on the host at most. */
  static final int MAX_POOL = 16;
  /** The local runtime's own pool of {@code base}, below which the extension never sets it. */
  static final int DEFAULT_POOL = 2;

  /** The demand of the plan under way; 0 when no plan was seen (the test kit runs engines without a launcher). */
  private static volatile int current;

  private SandboxDemand() {}

  static int current() {
    return current;
  }

  static void set(int demand) {
    current = demand;
  }

  /**
   * What one test asks for: a sandbox per instance field of its class (and of the classes
   * enclosing a nested one) and per parameter, of {@code base} and without volumes; fields that
   * are static count once per class, in {@code staticFieldsSeen}.
   */
  static int of(Class<?> testClass, Method method, Set<Class<?>> staticFieldsSeen) {
    int n = 0;
    for (Class<?> c = testClass; c != null; c = Modifier.isStatic(c.getModifiers()) ? null : c.getEnclosingClass()) {
      List<Field> fields = AnnotationSupport.findAnnotatedFields(c, E2BSandbox.class, f -> true, HierarchyTraversalMode.TOP_DOWN);
      for (Field f : fields) {
        boolean isStatic = Modifier.isStatic(f.getModifiers());
        if (isStatic && !staticFieldsSeen.add(c)) {
          continue;
        }
        n += pooled(AnnotationSupport.findAnnotation(f, E2BSandbox.class).orElseThrow());
      }
    }
    for (Parameter p : method.getParameters()) {
      n += AnnotationSupport.findAnnotation(p, E2BSandbox.class).map(SandboxDemand::pooled).orElse(0);
    }
    return n;
  }

  /** 1 for a sandbox a pool of {@code base} can serve, 0 for any other. */
  private static int pooled(E2BSandbox a) {
    return "base".equals(a.template()) && a.volumes().length == 0 ? 1 : 0;
  }

  /** A fresh set for {@link #of}'s static fields. */
  static Set<Class<?>> staticFieldsSeen() {
    return new HashSet<>();
  }
}
