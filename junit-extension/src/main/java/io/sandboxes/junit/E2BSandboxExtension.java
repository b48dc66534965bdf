package io.sandboxes.junit;

import io.sandboxes.EgressVerdict;
import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxRequest;
import io.sandboxes.dsl.Sandboxes;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;

/**
 * The extension behind {@link E2BSandbox}: verifies egress once per run, then provisions, injects,
 * reports and cleans up sandboxes. All state lives in JUnit's stores (the client and the verdict
 * for the whole run, each sandbox in the context of its scope), so it is safe under parallel
 * execution.
 *
 * @since 0.1
 */
public final class E2BSandboxExtension
    implements ExecutionCondition, BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback,
    ParameterResolver {

  private static final Namespace NAMESPACE = Namespace.create(E2BSandboxExtension.class);
  private static final String CLIENT = "client";
  private static final String VERDICT = "verdict";
  private static final String FAILED = "failed";
  private static final String RUNTIME = "runtime";

  /** Needed by JUnit. */
  public E2BSandboxExtension() {}

  // ---- whether anything can serve a sandbox here ----

  /**
   * Disables (rather than fails) the tests that ask for a sandbox when nothing could provide one:
   * no {@code E2B_API_KEY} and no usable local runtime (no Docker engine, say). The reason says
   * what is missing. With {@link E2BSandbox#RUNTIME_REQUIRED_PROPERTY_NAME} set to {@code true}
   * they fail instead, for builds where a skipped sandbox test would hide a broken machine. A
   * configured {@link E2BSandbox#CLIENT_SUPPLIER_PROPERTY_NAME} is trusted and never checked.
   */
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Optional<String> supplier = context.getConfigurationParameter(E2BSandbox.CLIENT_SUPPLIER_PROPERTY_NAME);
    if (supplier.isPresent()) {
      return ConditionEvaluationResult.enabled("sandboxes come from " + supplier.get());
    }
    Runtime runtime = getOrCreate(context.getRoot().getStore(NAMESPACE), RUNTIME,
        k -> new Runtime(Sandboxes.unavailableReason()), Runtime.class);
    if (runtime.missing().isEmpty()) {
      return ConditionEvaluationResult.enabled("a sandbox runtime is available");
    }
    String reason = "@E2BSandbox: nothing here can provide a sandbox: " + runtime.missing().get();
    boolean required = context.getConfigurationParameter(E2BSandbox.RUNTIME_REQUIRED_PROPERTY_NAME, Boolean::parseBoolean)
        .orElse(false);
    if (required) {
      throw new ExtensionConfigurationException(reason + " (" + E2BSandbox.RUNTIME_REQUIRED_PROPERTY_NAME + " = true)");
    }
    return ConditionEvaluationResult.disabled(reason);
  }

  /** What the run found when it looked for a runtime, looked up once. */
  private record Runtime(Optional<String> missing) {}

  // ---- injection ----

  @Override
  public void beforeAll(ExtensionContext context) {
    for (Field f : annotatedFields(context.getRequiredTestClass())) {
      if (Modifier.isStatic(f.getModifiers())) {
        inject(context, f, null);
      }
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
      for (Field f : annotatedFields(instance.getClass())) {
        if (!Modifier.isStatic(f.getModifiers())) {
          inject(context, f, instance);
        }
      }
    }
  }

  private static List<Field> annotatedFields(Class<?> type) {
    return AnnotationSupport.findAnnotatedFields(type, E2BSandbox.class, f -> true, HierarchyTraversalMode.TOP_DOWN);
  }

  private void inject(ExtensionContext context, Field field, Object instance) {
    String where = "field " + field.getDeclaringClass().getSimpleName() + "." + field.getName();
    if (Modifier.isFinal(field.getModifiers())) {
      throw new ExtensionConfigurationException("@E2BSandbox " + where + " must not be final");
    }
    checkType(field.getType(), where);
    E2BSandbox annotation = AnnotationSupport.findAnnotation(field, E2BSandbox.class).orElseThrow();
    Sandbox sandbox = sandbox(context, annotation, field, where);
    try {
      field.setAccessible(true);
      field.set(instance, sandbox);
    } catch (IllegalAccessException e) {
      throw new ExtensionConfigurationException("@E2BSandbox could not set " + where, e);
    }
  }

  private static void checkType(Class<?> type, String where) {
    if (type != Sandbox.class && type != io.sandboxes.e2b.LiveSandbox.class) {
      throw new ExtensionConfigurationException("@E2BSandbox " + where + " must be of type " + Sandbox.class.getName() + " or "
          + io.sandboxes.e2b.LiveSandbox.class.getName() + ", not " + type.getName());
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.isAnnotated(E2BSandbox.class);
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext context) {
    Parameter p = parameterContext.getParameter();
    String where = "parameter " + p.getName() + " of " + parameterContext.getDeclaringExecutable();
    try {
      checkType(p.getType(), where);
    } catch (ExtensionConfigurationException e) {
      throw new ParameterResolutionException(e.getMessage());
    }
    E2BSandbox annotation = parameterContext.findAnnotation(E2BSandbox.class).orElseThrow();
    return sandbox(context, annotation, p, where);
  }

  // ---- provisioning ----

  /** One sandbox per annotated element and context, created once and closed with the context. */
  private Sandbox sandbox(ExtensionContext context, E2BSandbox annotation, AnnotatedElement element, String where) {
    requireEgress(context, annotation);
    SandboxResource resource = getOrCreate(context.getStore(NAMESPACE), element,
        key -> provision(context, annotation, where), SandboxResource.class);
    return resource.sandbox;
  }

  private void requireEgress(ExtensionContext context, E2BSandbox annotation) {
    E2BSandbox.EgressPolicy policy = annotation.egress();
    if (policy == E2BSandbox.EgressPolicy.DEFAULT) {
      policy = context.getConfigurationParameter(E2BSandbox.DEFAULT_EGRESS_POLICY_PROPERTY_NAME)
          .map(v -> E2BSandbox.EgressPolicy.valueOf(v.strip().toUpperCase(java.util.Locale.ROOT)))
          .orElse(E2BSandbox.EgressPolicy.REQUIRE_FILTERED);
    }
    if (policy == E2BSandbox.EgressPolicy.SKIP) {
      return;
    }
    SandboxClient client = client(context);
    ExtensionContext.Store root = context.getRoot().getStore(NAMESPACE);
    EgressVerdict verdict = getOrCreate(root, VERDICT, k -> client.verifyEgress(), EgressVerdict.class);
    if (verdict.state() == EgressVerdict.State.FILTERED) {
      return;
    }
    String text = "egress is not proven locked down: verifyEgress said " + verdict.state() + ". " + verdict.detail()
        + (verdict.remediation() == null ? "" : " Remediation: " + verdict.remediation());
    if (policy == E2BSandbox.EgressPolicy.WARN) {
      context.publishReportEntry("e2b.egress", text);
      return;
    }
    throw new ExtensionConfigurationException(text + " (set @E2BSandbox(egress = WARN) or the configuration parameter "
        + E2BSandbox.DEFAULT_EGRESS_POLICY_PROPERTY_NAME + " to run anyway)");
  }

  private SandboxClient client(ExtensionContext context) {
    return getOrCreate(context.getRoot().getStore(NAMESPACE), CLIENT, k -> new ClientResource(newClient(context)),
        ClientResource.class).client;
  }

  /** The system property by which a user sets the local runtime's warm pool; set, the extension leaves the pool alone. */
  static final String WARM_POOL_PROPERTY = "sandboxes.local.warm-pool";
  /** How long the extension waits, once per run, for the warm pool it asked for to fill. */
  static final Duration WARM_POOL_WAIT = Duration.ofSeconds(60);

  @SuppressWarnings("unchecked")
  private static SandboxClient newClient(ExtensionContext context) {
    Optional<String> supplier = context.getConfigurationParameter(E2BSandbox.CLIENT_SUPPLIER_PROPERTY_NAME);
    if (supplier.isEmpty()) {
      return warmClient(context);
    }
    try {
      Class<?> type = Class.forName(supplier.get(), true, Thread.currentThread().getContextClassLoader());
      return ((Supplier<SandboxClient>) type.getDeclaredConstructor().newInstance()).get();
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new ExtensionConfigurationException(E2BSandbox.CLIENT_SUPPLIER_PROPERTY_NAME + " = " + supplier.get()
          + " is not a Supplier<SandboxClient> with a public no-argument constructor", e);
    }
  }

  /**
   * {@code Sandboxes.auto()}, its local runtime (when that is the one chosen) with a warm pool of
   * as many sandboxes as the run's tests ask for (counted from the test plan by
   * {@link E2BSandboxPlanListener}, plus one for the egress probe, up to
   * {@link SandboxDemand#MAX_POOL}, never fewer than the runtime's default), and waits for that
   * pool to fill before the first test's create, so every create of the run takes a ready sandbox.
   * A pool the user set ({@value #WARM_POOL_PROPERTY}) is left as it is; so is a server found
   * running, whose pool is its own.
   */
  private static SandboxClient warmClient(ExtensionContext context) {
    int demand = SandboxDemand.current();
    if (demand == 0 || System.getProperty(WARM_POOL_PROPERTY) != null) {
      return Sandboxes.auto();
    }
    int size = Math.min(demand + 1, SandboxDemand.MAX_POOL);
    SandboxClient client = Sandboxes.auto(o -> size > SandboxDemand.DEFAULT_POOL ? o.warmPool(size) : o);
    long t0 = System.nanoTime();
    boolean full = client.awaitWarmPool(WARM_POOL_WAIT);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    context.publishReportEntry("e2b.warmPool", full ? "ready in " + ms + " ms for " + demand + " sandboxes"
        : "not ready after " + ms + " ms: no pool this run can see (E2B's cloud, a server found running) or not full in time");
    return client;
  }

  private SandboxResource provision(ExtensionContext context, E2BSandbox a, String where) {
    SandboxClient client = client(context);
    SandboxRequest request = client.sandbox().template(a.template()).timeout(Duration.ofSeconds(a.timeoutSeconds()));
    for (String e : a.env()) {
      int eq = e.indexOf('=');
      if (eq <= 0) {
        throw new ExtensionConfigurationException("@E2BSandbox on " + where + ": env entries are NAME=value, got '" + e + "'");
      }
      request = request.env(e.substring(0, eq), e.substring(eq + 1));
    }
    if (a.allowOut().length > 0) {
      request = request.allowOut(a.allowOut());
    }
    for (String v : a.volumes()) {
      int colon = v.indexOf(':');
      if (colon <= 0) {
        throw new ExtensionConfigurationException("@E2BSandbox on " + where + ": volumes are name:/mount/path, got '" + v + "'");
      }
      client.provider().createVolume(v.substring(0, colon));
      request = request.withVolume(v.substring(0, colon), v.substring(colon + 1));
    }
    long started = System.nanoTime();
    io.sandboxes.e2b.LiveSandbox sandbox = request.create();
    context.publishReportEntry(Map.of("e2b.sandbox.id", sandbox.id(),
        "e2b.sandbox.startMillis", Long.toString((System.nanoTime() - started) / 1_000_000),
        "e2b.sandbox.for", where));
    return new SandboxResource(sandbox, cleanupMode(context, a), context, client, where);
  }

  private static E2BSandbox.CleanupMode cleanupMode(ExtensionContext context, E2BSandbox a) {
    if (a.cleanup() != E2BSandbox.CleanupMode.DEFAULT) {
      return a.cleanup();
    }
    return context.getConfigurationParameter(E2BSandbox.DEFAULT_CLEANUP_MODE_PROPERTY_NAME)
        .map(v -> E2BSandbox.CleanupMode.valueOf(v.strip().toUpperCase(java.util.Locale.ROOT)))
        .orElse(E2BSandbox.CleanupMode.ALWAYS);
  }

  // ---- the stores ----

  /**
   * The store's value for {@code key}, made by {@code creator} the first time. Every lookup that
   * may create goes through here, so that one jar runs on JUnit Jupiter 5.10 or newer and on 6.x:
   * {@code Store.computeIfAbsent(K, Function, Class)} is new in 6.0, while
   * {@code getOrComputeIfAbsent} is in every 5.x and still in 6.x (deprecated there, not for
   * removal). One difference remains: 5.x remembers a creator's exception and rethrows it to every
   * later caller for that key, where 6.x calls the creator again.
   */
  // getOrComputeIfAbsent is deprecated in JUnit 6, but its replacement does not exist in 5.x
  @SuppressWarnings("deprecation")
  private static <K, V> V getOrCreate(ExtensionContext.Store store, K key, Function<K, V> creator, Class<V> type) {
    return store.getOrComputeIfAbsent(key, creator, type);
  }

  // ---- failures and cleanup ----

  @Override
  public void afterEach(ExtensionContext context) {
    if (context.getExecutionException().isPresent()) {
      for (Optional<ExtensionContext> c = Optional.of(context); c.isPresent(); c = c.get().getParent()) {
        // keyed by the context's own id: a store lookup falls back to the parents' stores
        getOrCreate(c.get().getStore(NAMESPACE), FAILED + c.get().getUniqueId(), k -> new AtomicBoolean(), AtomicBoolean.class).set(true);
      }
    }
    reportKept(context);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    reportKept(context);
  }

  /** Says which sandboxes of this context will be kept, before the context (and its report) ends. */
  private static void reportKept(ExtensionContext context) {
    SandboxResource.announceKept(context);
  }

  /**
   * A value the store closes when its context ends. JUnit 5.10 to 5.12 close only a
   * {@code CloseableResource}; 5.13 and later (6.x included) close an {@code AutoCloseable}, and
   * take that path first, so a value that is both is closed once on every version.
   */
  // CloseableResource is deprecated since JUnit 5.13, but the JUnit 5 versions before it close nothing else
  @SuppressWarnings("deprecation")
  interface StoreResource extends AutoCloseable, ExtensionContext.Store.CloseableResource {
    @Override
    void close();
  }

  /** The run-wide client, closed when the run ends. */
  static final class ClientResource implements StoreResource {
    final SandboxClient client;

    ClientResource(SandboxClient client) {
      this.client = client;
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /** A provisioned sandbox, destroyed (or kept) when its context ends. */
  static final class SandboxResource implements StoreResource {
    final io.sandboxes.e2b.LiveSandbox sandbox;
    private final E2BSandbox.CleanupMode mode;
    private final ExtensionContext context;
    private final SandboxClient client;
    private final String where;

    SandboxResource(io.sandboxes.e2b.LiveSandbox sandbox, E2BSandbox.CleanupMode mode, ExtensionContext context, SandboxClient client,
        String where) {
      this.sandbox = sandbox;
      this.mode = mode;
      this.context = context;
      this.client = client;
      this.where = where;
      getOrCreate(context.getStore(NAMESPACE), Made.class, k -> new Made(), Made.class).resources.add(this);
    }

    private boolean failed() {
      AtomicBoolean flag = context.getStore(NAMESPACE).get(FAILED + context.getUniqueId(), AtomicBoolean.class);
      return context.getExecutionException().isPresent() || (flag != null && flag.get());
    }

    private boolean keep() {
      return mode == E2BSandbox.CleanupMode.NEVER || (mode == E2BSandbox.CleanupMode.ON_SUCCESS && failed());
    }

    /**
     * Reports the sandboxes of this very context that will outlive it: a report entry, and a line
     * on stderr, which build tools show where a report entry is not (Maven Surefire prints a
     * test's output on the console, or keeps it beside the report with
     * {@code redirectTestOutputToFile}; Gradle keeps it in its test report, and on the console with
     * {@code testLogging.showStandardStreams}).
     */
    static void announceKept(ExtensionContext context) {
      Made made = context.getStore(NAMESPACE).get(Made.class, Made.class);
      if (made == null) {
        return;
      }
      for (SandboxResource r : made.resources) {
        if (r.context == context && r.keep()) {
          String how = r.client.howToReach(r.sandbox.id());
          context.publishReportEntry(Map.of("e2b.sandbox.kept", r.sandbox.id(), "e2b.sandbox.kept.howToReach", how));
          System.err.println("[@E2BSandbox] kept sandbox " + r.sandbox.id() + " of " + r.where + " (cleanup = " + r.mode
              + (r.mode == E2BSandbox.CleanupMode.ON_SUCCESS ? ", and it failed" : "") + deadline(r.sandbox) + "): " + how);
        }
      }
    }

    /** {@code , deadline <instant>} when the sandbox says it, else nothing. */
    private static String deadline(io.sandboxes.e2b.LiveSandbox sandbox) {
      try {
        java.time.Instant end = sandbox.info().endAt();
        return end == null ? "" : ", deadline " + end.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      } catch (RuntimeException e) {
        return "";
      }
    }

    @Override
    public void close() {
      if (!keep()) {
        sandbox.close();
      }
    }
  }

  /** The sandboxes a context made (not closeable: the store closes each resource once, under its own key). */
  static final class Made {
    final List<SandboxResource> resources = new java.util.concurrent.CopyOnWriteArrayList<>();
  }
}
