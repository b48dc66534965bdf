package io.sandboxes.dsl;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.CheckReturnValue;
import io.sandboxes.EgressVerdict;
import io.sandboxes.SandboxInfo;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxQuery;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Where sandboxes come from, as {@link Sandboxes} hands it out, in E2B's words:
 * {@link #create()}, {@link #connect(String)}, {@link #list(SandboxQuery)},
 * {@link #fork(String, int, java.time.Duration)}, {@link #kill(String)};
 * {@link #sandbox()} begins a request to configure first. The provider underneath is there for
 * the provider-neutral API and E2B's raw API.
 *
 * {@snippet class=io.sandboxes.snippets.DslSnippets region=sandbox-client :
 * try (SandboxClient sandboxes = Sandboxes.local()) {
 *   System.out.println(sandboxes.sandbox().exec("python3 -c 'print(6 * 7)'").stdout());
 * }
 * }
 *
 * <p>Closing it releases its HTTP client and, for {@link Sandboxes#local()}, stops a server it
 * started in this process (and that server's sandboxes). Thread-safe.
 *
 * @since 0.1
 */
@CheckReturnValue
public final class SandboxClient implements AutoCloseable {
  private final E2BSandboxProvider provider;
  private final Origin origin;
  /** The local server this client reaches through the local runtime, when it does. */
  private final io.sandboxes.spi.LocalRuntime.@org.jspecify.annotations.Nullable Endpoint local;

  /** Where the client's server is, which decides how long its sandboxes can outlive this program. */
  enum Origin {
    /** {@link Sandboxes#e2b()}: E2B's cloud, or a server the provider was pointed at. */
    E2B,
    /** {@link Sandboxes#at}: a server named by its URLs and key. */
    AT,
    /** {@link Sandboxes#local()} with its server inside this JVM. */
    LOCAL_IN_PROCESS,
    /** {@link Sandboxes#local()} with a server of its own process, found running or started in the background. */
    LOCAL_SHARED
  }

  SandboxClient(E2BSandboxProvider provider, Origin origin) {
    this(provider, origin, null);
  }

  SandboxClient(E2BSandboxProvider provider, Origin origin, io.sandboxes.spi.LocalRuntime.@org.jspecify.annotations.Nullable Endpoint local) {
    this.provider = Objects.requireNonNull(provider, "provider");
    this.origin = Objects.requireNonNull(origin, "origin");
    this.local = local;
  }

  /**
   * Waits until the warm pools of a local server this client started in this process hold the
   * pre-started sandboxes they were configured to keep (see {@link LocalOptions#warmPool(int)}),
   * so that the creates that follow take ready ones instead of starting containers cold. A test
   * suite or a burst that knows its demand asks for a pool of that size, then waits here once.
   *
   * @param within the longest to wait
   * @return true once every pool is full; false when one is not within the time, or when there is
   *     no pool this client can see: E2B's cloud, a server named by its URLs, or a local server of
   *     its own process (found running or started in the background)
   * @since 0.1
   */
  public boolean awaitWarmPool(Duration within) {
    Objects.requireNonNull(within, "within");
    return local != null && local.awaitWarmPool(within);
  }

  /**
   * Begins describing a sandbox; nothing is created until the request's terminal verb
   * ({@link SandboxRequest#create()}, {@link SandboxRequest#exec(String)},
   * {@link SandboxRequest#run}, {@link SandboxRequest#apply}).
   *
   * @return a request with the defaults (template {@code base}, 5 minutes, no egress)
   */
  public SandboxRequest sandbox() {
    return SandboxRequest.defaults(provider);
  }

  /**
   * Creates a sandbox with the defaults; {@code sandbox().create()} in one word, as E2B's
   * {@code Sandbox.create()}.
   *
   * @return the live sandbox; close it to kill it
   * @throws io.sandboxes.SandboxException when it cannot be created
   */
  public LiveSandbox create() {
    return sandbox().create();
  }

  /**
   * Connects to an existing sandbox, resuming it when it is paused, as E2B's
   * {@code Sandbox.connect(id)}, with E2B's default timeout of 5 minutes: see
   * {@link #connect(String, Duration)} for what that does to its deadline.
   *
   * @param sandboxId the sandbox's id
   * @return a live handle
   * @throws io.sandboxes.SandboxNotFoundException when the server says it does not exist (killed,
   *     or past its deadline)
   * @throws io.sandboxes.SandboxException when the server could not be asked
   */
  public LiveSandbox connect(String sandboxId) {
    Objects.requireNonNull(sandboxId, "sandboxId");
    return provider.api().connect(sandboxId);
  }

  /**
   * Connects to an existing sandbox, as E2B's {@code Sandbox.connect(id, {timeoutMs})}. The
   * timeout is sent to the server, which does what E2B's does with it: a paused sandbox is
   * resumed and then ends {@code timeout} from now; a running sandbox's deadline only ever moves
   * later, to {@code timeout} from now when that is later than its deadline, and stays where it is
   * otherwise (connecting never shortens a sandbox's life; {@link LiveSandbox#setTimeout(Duration)}
   * does). The handle does not own the sandbox more than any other: closing it kills the sandbox.
   *
   * @param sandboxId the sandbox's id
   * @param timeout how long the sandbox should live from now at least, positive
   * @return a live handle
   * @throws io.sandboxes.SandboxNotFoundException when the server says it does not exist (killed,
   *     or past its deadline)
   * @throws io.sandboxes.SandboxException when the server could not be asked
   */
  public LiveSandbox connect(String sandboxId, Duration timeout) {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(timeout, "timeout");
    return provider.api().connect(sandboxId, timeout);
  }

  /**
   * Lists every sandbox these credentials can see, running and paused, without connecting to any
   * (a paused one stays paused), reading every page.
   *
   * @return the sandboxes, in the server's order
   * @throws io.sandboxes.SandboxException when the listing cannot be read; never an empty list instead
   */
  public List<SandboxInfo> list() {
    return list(SandboxQuery.all());
  }

  /**
   * Lists the sandboxes a query selects (by state, metadata, start time and template, in the
   * query's order by start time), reading every page.
   *
   * {@snippet class=io.sandboxes.snippets.DslSnippets region=list :
   * List<SandboxInfo> paused = sandboxes.list(SandboxQuery.inState(SandboxState.PAUSED));
   * List<SandboxInfo> mine = sandboxes.list(SandboxQuery.byMetadata("projectId", "p-42"));
   * }
   *
   * @param query states, metadata pairs, start time, template, order and page size
   * @return the sandboxes, in the query's order
   * @throws io.sandboxes.SandboxException when the listing cannot be read; never an empty list instead
   */
  public List<SandboxInfo> list(SandboxQuery query) {
    Objects.requireNonNull(query, "query");
    return provider.api().listAll(query);
  }

  /**
   * Forks a running sandbox, as E2B's {@code Sandbox.fork(id, {count, timeoutMs})}: each fork
   * starts from the parent's state now, under its own id, and diverges from then on; the parent
   * keeps running untouched.
   *
   * @param sandboxId the parent's id
   * @param count how many forks, 1 to 100
   * @param timeout how long each fork lives from now, positive
   * @return one result per requested fork, in order: a live sandbox (the caller's to close) or
   *     the error that kept it from starting
   * @throws io.sandboxes.SandboxNotFoundException when there is no such sandbox
   * @throws io.sandboxes.SandboxException when no fork was attempted
   * @see io.sandboxes.e2b.E2BApi#fork(String, int, java.time.Duration) what a fork keeps of its parent
   */
  public List<io.sandboxes.e2b.ForkResult> fork(String sandboxId, int count, java.time.Duration timeout) {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(timeout, "timeout");
    return provider.api().fork(sandboxId, count, timeout);
  }

  /**
   * Kills a sandbox by id, running or paused.
   *
   * @param sandboxId the sandbox's id
   * @return true when it was killed, false when the server says it did not exist
   * @throws io.sandboxes.SandboxException when the server could not be asked
   */
  @CanIgnoreReturnValue
  public boolean kill(String sandboxId) {
    Objects.requireNonNull(sandboxId, "sandboxId");
    return provider.api().kill(sandboxId);
  }

  /**
   * The provider underneath, for the provider-neutral API and E2B's raw API.
   *
   * @return the provider ({@code provider().api()} is E2B's API call for call)
   */
  public E2BSandboxProvider provider() {
    return provider;
  }

  /**
   * Checks, by observation from a throwaway sandbox, that egress is locked down.
   *
   * @return what the probe observed (see {@link E2BSandboxProvider#verifyEgress()})
   */
  public EgressVerdict verifyEgress() {
    return provider.verifyEgress();
  }

  /**
   * Builds a template under a name, following its log, as E2B's {@code Template.build(t, name,
   * {onBuildLogs})}; then {@code sandbox().template(built)} boots from it.
   *
   * {@snippet class=io.sandboxes.snippets.DslSnippets region=build-template :
   * Template tools = Template.fromTemplate("base")
   *     .withContextDir(project)                          // copy() reads from here
   *     .copy("greet.sh", "/home/user/greet.sh", CopyOptions.defaults().withMode(0755))
   *     .runCmd("echo built-by-$(id -un) > /home/user/built.txt");
   * BuildInfo built = sandboxes.buildTemplate(tools, "greeter", line -> System.out.println(line.message()));
   * try (LiveSandbox sandbox = sandboxes.sandbox().template(built).create()) {
   *   System.out.print(sandbox.exec("/home/user/greet.sh").stdout());
   * }
   * }
   *
   * @param template what to build
   * @param name the template's name; building it again rebuilds it, cached steps not run again
   * @param onLog called with each log line as it is read
   * @return the template's id, the build's id and its name
   * @throws io.sandboxes.template.TemplateBuildException when the build fails (the server's reason,
   *     e.g. a RUN step's exit code, and the log so far) or outlasts the default hour
   * @throws IllegalArgumentException when the name is blank or a COPY source cannot be used; nothing is sent
   * @see io.sandboxes.e2b.E2BApi#buildTemplate(io.sandboxes.template.Template, String, io.sandboxes.template.BuildOptions)
   */
  public io.sandboxes.template.BuildInfo buildTemplate(io.sandboxes.template.Template template, String name,
      java.util.function.Consumer<io.sandboxes.template.BuildLogEntry> onLog) {
    return buildTemplate(template, name, io.sandboxes.template.BuildOptions.defaults().onLog(Objects.requireNonNull(onLog, "onLog")));
  }

  /**
   * Builds a template under a name with the given options (resources, tags, cache, timeout, log).
   *
   * @param template what to build
   * @param name the template's name
   * @param options how to build it
   * @return the template's id, the build's id and its name
   * @throws io.sandboxes.template.TemplateBuildException when the build fails or outlasts the options' timeout
   * @see #buildTemplate(io.sandboxes.template.Template, String, java.util.function.Consumer)
   */
  public io.sandboxes.template.BuildInfo buildTemplate(io.sandboxes.template.Template template, String name,
      io.sandboxes.template.BuildOptions options) {
    return provider.api().buildTemplate(template, name, options);
  }

  /**
   * Deletes a built template (or a snapshot) by its name or id.
   *
   * @param name the template's name or id
   * @return false when the server says there was no such template
   * @throws io.sandboxes.SandboxApiException with status 409 while a sandbox created from it
   *     still exists
   */
  @CanIgnoreReturnValue
  public boolean deleteTemplate(String name) {
    Objects.requireNonNull(name, "name");
    return provider.api().deleteTemplate(name);
  }

  /**
   * Says how another program reaches one of this client's sandboxes once this one has ended, or
   * that none can: one sentence, for a test framework or a tool to print beside the id of a
   * sandbox it keeps for inspection. It names no secret (no API key).
   *
   * @param sandboxId a sandbox of this client
   * @return e.g. {@code Sandboxes.local().connect("…") reaches it from any program of this user
   *     on this machine while the server at … runs}, or, for a server inside this JVM, that the
   *     sandbox ends with it
   */
  public String howToReach(String sandboxId) {
    Objects.requireNonNull(sandboxId, "sandboxId");
    String id = '"' + sandboxId + '"';
    return switch (origin) {
      case LOCAL_SHARED -> "Sandboxes.local().connect(" + id + ") reaches it from any program of this user on this machine while"
          + " the sandboxes-local server at " + provider.apiUrl() + " runs; it lives until its deadline unless it is paused"
          + " (a paused sandbox has none), and setTimeout(..) moves it";
      case LOCAL_IN_PROCESS -> "it ends when this JVM exits: its sandboxes-local server runs inside this JVM. To keep such"
          + " sandboxes, run sandboxes-local serve on this machine, or set -Dsandboxes.local.background=true, and"
          + " Sandboxes.local().connect(" + id + ") reaches them afterwards (README, \"Sandboxes that outlive the JVM\")";
      case E2B -> "connect(" + id + ") on a provider for " + provider.apiUrl() + " with the same API key reaches it"
          + " (Sandboxes.e2b() for E2B's cloud); it lives until its deadline";
      case AT -> "Sandboxes.at(..).connect(" + id + ") with the same server URLs (" + provider.apiUrl() + ") and key"
          + " reaches it; it lives until its deadline";
    };
  }

  /** Releases the client (and a local server it started in this process). Idempotent. */
  @Override
  public void close() {
    provider.close();
  }

  @Override
  public String toString() {
    return "SandboxClient[" + provider.apiUrl() + "]";
  }
}
