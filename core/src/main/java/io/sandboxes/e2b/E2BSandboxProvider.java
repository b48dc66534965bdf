package io.sandboxes.e2b;

import io.sandboxes.Describing;
import io.sandboxes.OnTimeout;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxProvider;
import io.sandboxes.TemplateCommit;
import io.sandboxes.TemplateDescriptor;
import io.sandboxes.TemplateManagement;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeManagement;
import io.sandboxes.VolumeQuery;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Http;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The E2B provider: creates, finds, lists and kills sandboxes through E2B's control plane, and
 * hands out {@link LiveSandbox} handles that talk to each sandbox's daemon.
 *
 * <p>It speaks E2B's real protocol, so it works against E2B's cloud, a self-hosted E2B, or the
 * local runtime ({@code sandboxes-local}). Configuration comes from the builder, then from the
 * environment: {@code E2B_API_KEY}, {@code E2B_API_URL}, {@code E2B_SANDBOX_URL}, {@code E2B_DOMAIN}.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=e2b-provider :
 * try (E2BSandboxProvider e2b = E2BSandboxProvider.fromEnvironment();
 *      LiveSandbox sandbox = e2b.api().create(SandboxSpec.defaults())) {
 *   System.out.println(sandbox.exec("uname -a").stdout());
 * }
 * }
 *
 * <p>Each provider is one account: its key, its URLs, its timeouts and retries, its HTTP client.
 * Several accounts are several providers in one JVM, each configured by its own builder, sharing
 * nothing (give them one {@link Builder#httpClient} to share connections); a builder with
 * {@code environment(Map.of())} takes nothing from the process environment, so an unset value
 * cannot come from another account's {@code E2B_*} variables.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=accounts :
 * try (E2BSandboxProvider team = E2BSandboxProvider.builder().apiKey(teamKey).retries(5).build();
 *      E2BSandboxProvider other = E2BSandboxProvider.builder().apiKey(otherKey).environment(Map.of()).build()) {
 *   try (LiveSandbox sandbox = team.api().create()) {
 *     System.out.println(sandbox.exec("echo on the first account").stdout());
 *   } catch (SandboxRateLimitException e) {   // still 429 after 5 retries within the request timeout
 *     System.out.println("rate limited; wait " + e.retryAfter().orElse(Duration.ofSeconds(1)));
 *   } catch (SandboxServiceBusyException e) { // 503: nothing was created, try again shortly
 *     System.out.println("busy: " + e.serverMessage());
 *   }
 *   System.out.println(other.api().list(SandboxQuery.all()).items().size() + " on the other");
 * }
 * }
 *
 * <p>Errors are typed as E2B's SDKs type them, all {@link io.sandboxes.SandboxApiException}s:
 * 401/403 {@link io.sandboxes.SandboxAuthenticationException}, 429
 * {@link io.sandboxes.SandboxRateLimitException} (after the retries, {@link Builder#retries}),
 * 503 {@link io.sandboxes.SandboxServiceBusyException}, 507
 * {@link io.sandboxes.SandboxNotEnoughSpaceException}.
 *
 * <p>Thread-safe. Owns an HTTP client and its virtual-thread executor unless the builder was given
 * them ({@link Builder#httpClient}, {@link Builder#executor}); {@link #close()} releases what it
 * owns (and anything attached with {@link Builder#closing(AutoCloseable)}), but does not kill the
 * sandboxes it created: those are closed one by one, or end at their timeout.
 *
 * <p>On the wire it names itself {@code User-Agent: sandboxes-java/<version>} ({@link Builder#integration} adds a tag), and on control-plane
 * calls adds the metadata headers E2B's SDKs send ({@code lang: java}, {@code lang_version},
 * {@code package_version}, {@code publisher: sandboxes}, {@code sdk_runtime: jvm},
 * {@code system}). It creates and connects at E2B's {@code /v2/sandboxes} paths, as the JS SDK
 * 2.51 does.
 *
 * @since 0.1
 */
public final class E2BSandboxProvider
    implements SandboxProvider, Describing, VolumeManagement, TemplateManagement, io.sandboxes.EgressVerification {

  /** E2B's domain, used when neither the builder nor {@code E2B_DOMAIN} names one. */
  public static final String DEFAULT_DOMAIN = "e2b.app";

  /** The time a single HTTP call may take, as E2B's SDKs default: 60 seconds. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);
  /** The lifetime given to created and reconnected sandboxes unless configured: one hour. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofHours(1);
  /** The port {@link Sandbox#previewUrl()} points at unless configured (Vite's). */
  public static final int DEFAULT_PREVIEW_PORT = 5173;
  /** How many times a control-plane call answered 429 is retried unless configured, as E2B's SDKs: 3. */
  public static final int DEFAULT_RETRIES = ControlPlane.DEFAULT_RETRIES;

  /** What this provider runs with; read by the package's collaborators, not API. */
  final ProviderSettings.Resolved settings;
  private final Http http;
  private final ControlPlane controlPlane;
  private final E2BApi api;
  private final AtomicBoolean closed = new AtomicBoolean();

  private E2BSandboxProvider(ProviderSettings.Resolved settings) {
    this.settings = settings;
    this.http = new Http(settings.requestTimeout(), settings.transport(), settings.userAgent());
    this.controlPlane = new ControlPlane(http, settings.apiUrl(), settings.apiKey(), settings.retries());
    this.api = new E2BApi(this, http, controlPlane, settings.sandboxUrl(), settings.domain());
  }

  /**
   * Starts configuring a provider.
   *
   * @return a builder; unset values come from the environment
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Creates a provider from the {@code E2B_*} environment variables alone.
   *
   * @return a provider configured entirely from the environment variables
   */
  public static E2BSandboxProvider fromEnvironment() {
    return builder().build();
  }

  /**
   * Returns the control-plane base URL, as configured or derived from the domain.
   *
   * @return the control-plane base URL in use
   */
  public URI apiUrl() {
    return settings.apiUrl();
  }

  /**
   * Returns the one daemon URL every sandbox is reached at, when there is one.
   *
   * @return the daemon URL shared by all sandboxes, when one is configured; otherwise, as in E2B's
   *     SDKs, every sandbox under E2B's own domains ({@code e2b.app}, {@code e2b.dev},
   *     {@code e2b.pro}, {@code e2b-staging.dev}) is reached at the shared
   *     {@code https://sandbox.<domain>}, and under any other domain at
   *     {@code https://49983-<id>.<domain>}; the {@code E2b-Sandbox-Id} header routes either way
   */
  public Optional<URI> sandboxUrl() {
    return Optional.ofNullable(settings.sandboxUrl());
  }

  /**
   * E2B's own API, call for call: create, connect, info, paged listing, pause, timeouts, kill,
   * volumes, snapshots. It answers exactly what the server says; the seed's semantics (what
   * {@link io.sandboxes.SandboxProvider} promises) are built on it.
   *
   * @return the raw API of this provider
   */
  public E2BApi api() {
    return api;
  }

  /** @return {@code e2b} */
  @Override
  public String name() {
    return "e2b";
  }

  /**
   * {@inheritDoc}
   *
   * <p>The sandbox boots from the config's template (else the provider's), lives for the config's
   * timeout (else one hour), pauses with its memory at that deadline instead of dying, carries
   * {@code projectId} and the labels as metadata, and mounts the named volume at its path. When
   * the provider has a default allow-list, it is applied deny-by-default before the handle is
   * returned; if that fails the sandbox is destroyed and the failure thrown (naming the orphan
   * when even the destroy fails).
   *
   * <p>Decided where the TypeScript provider was silent or lax: a boot {@code command} is refused
   * (E2B sandboxes run none, and the contract says a provider that cannot run one must throw);
   * {@code projectId} always wins over a caller label of the same name; an allow-list that cannot
   * be applied fails the create instead of being skipped; a volume without a mount path is refused
   * before anything is created.
   */
  @Override
  public LiveSandbox create(SandboxConfig config) {
    return create(config, OnTimeout.PAUSE, settings.defaultAllowOut());
  }

  /**
   * Creates with {@code allowOut} sent deny-by-default in the create request (none when empty), so the
   * sandbox never runs under another policy; the egress probe passes none, its sandbox's first policy its own.
   */
  LiveSandbox create(SandboxConfig config, OnTimeout onTimeout, List<String> allowOut) {
    ensureOpen();
    Objects.requireNonNull(config, "config");
    return api.create(ProviderSettings.spec(settings, config, onTimeout, allowOut));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Connects (resuming a paused sandbox) with the provider's default timeout.
   */
  @Override
  public Optional<Sandbox> get(String sandboxId) {
    ensureOpen();
    try {
      return Optional.of(api.connect(sandboxId, settings.defaultTimeout()));
    } catch (SandboxNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the account-wide listing of running sandboxes (E2B scopes listings by API key), one
   * request per page as E2B's SDKs do, and takes what it says: every sandbox the server lists as
   * running gets a handle, in the listing's order, whatever the client's clock says of its end
   * time; a row the server marks paused is skipped. Nothing is asked per sandbox, so no deadline
   * moves and nothing is resumed: each handle looks its daemon's address and token up when it is
   * first used, and a sandbox that ended or was paused since the listing makes that first call
   * throw ({@link SandboxNotFoundException}, {@link io.sandboxes.SandboxPausedException}). A page
   * that cannot be read fails the whole call. An interrupt ends the call at once with a
   * {@link SandboxException} and the interrupt flag kept, the request in flight aborted.
   */
  @Override
  public List<Sandbox> list() {
    ensureOpen();
    return SandboxHandles.listedRunning(api);
  }

  /** Kills the sandbox (running or paused); one that is already gone is not an error. */
  @Override
  public void destroy(String sandboxId) {
    ensureOpen();
    api.kill(sandboxId);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the control plane's record and never connects. A sparse record is tolerated: a
   * missing id is the requested one, a missing template, daemon version or unreadable start time
   * is null, a missing or unreadable CPU or memory count is 0, missing metadata or mounts are
   * empty; a state other than {@code paused} reads as running.
   */
  @Override
  public Optional<SandboxInfo> describe(String sandboxId) {
    ensureOpen();
    return ApiAnswers.sparseInfo(controlPlane, sandboxId);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The probe sandbox is created to be killed (not paused) at its deadline, gets the probe's
   * allow-list with {@code denyOut: [0.0.0.0/0]}, runs {@code curl -s -o /dev/null -m 8 -w
   * '%{http_code}'} against the allowed host, the denied host and the raw IP, and is destroyed on
   * every path (with one retry; a sandbox left behind is named in the detail).
   */
  @Override
  public io.sandboxes.EgressVerdict verifyEgress() {
    return EgressProbeRun.verify(this, closed.get(), controlPlane);
  }

  @Override
  public void createVolume(String name) {
    VolumesByName.create(api, name);
  }

  @Override
  public void removeVolume(String name) {
    VolumesByName.remove(api, name);
  }

  @Override
  public boolean volumeExists(String name) {
    return VolumesByName.find(api, name).isPresent();
  }

  @Override
  public List<VolumeDescriptor> listVolumes(VolumeQuery query) {
    return VolumesByName.list(api, query);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The template's id is the snapshot's name, so committing the same id again replaces it.
   * When capture paths are given, the sandbox's record is read (without connecting) and any path
   * on a mounted volume is refused; unlike the TypeScript provider, this check is never skipped.
   */
  @Override
  public TemplateDescriptor commitTemplate(TemplateCommit commit) {
    return TemplatesOverSnapshots.commit(api, commit);
  }

  @Override
  public Optional<TemplateDescriptor> getTemplate(String templateId) {
    return TemplatesOverSnapshots.get(api, templateId);
  }

  @Override
  public List<TemplateDescriptor> listTemplates(@Nullable String idPrefix) {
    return TemplatesOverSnapshots.list(api, idPrefix);
  }

  @Override
  public void removeTemplate(String templateId) {
    TemplatesOverSnapshots.remove(api, templateId);
  }

  void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this E2BSandboxProvider is closed");
    }
  }

  /**
   * Releases the HTTP client and executor it built (never ones the builder was given), then
   * whatever was attached with {@link Builder#closing}. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    ProviderSettings.release(http, settings.closing());
  }

  /**
   * Configures an {@link E2BSandboxProvider}. Every unset value falls back to the environment,
   * then to E2B's cloud defaults.
   */
  public static final class Builder {
    private final ProviderSettings settings = new ProviderSettings();

    private Builder() {}

    /**
     * Uses the caller's HTTP client for every call, to the control plane and to the sandboxes,
     * instead of one the provider builds: for a private CA, a TLS-inspecting proxy, client
     * certificates or any other transport setting, without changing JVM-wide defaults.
     *
     * <p>The client is used as it is: its SSL context, proxy, executor, connect timeout,
     * authenticator and redirect policy apply (the provider's own client follows no redirects, and
     * a client that does may send the API key on to wherever it is redirected). The
     * {@link #requestTimeout(Duration) request timeout} still applies to each call. The provider
     * never closes it: it stays the caller's to close, after the provider. Cannot be combined with
     * {@link #sslContext}, {@link #proxy} or {@link #executor}, which configure the provider's own
     * client ({@link #build()} refuses the mix).
     *
     * @param httpClient the client to send every request with
     * @return this
     */
    public Builder httpClient(java.net.http.HttpClient httpClient) {
      settings.httpClient = Objects.requireNonNull(httpClient, "httpClient");
      return this;
    }

    /**
     * Sets the TLS context of the provider's own HTTP client, e.g. one whose trust manager adds a
     * private CA to the JDK's (setting {@code javax.net.ssl.trustStore} would replace the JDK's
     * CAs, and for the whole JVM).
     *
     * @param sslContext the context every {@code https} connection is made with
     * @return this
     * @see #httpClient(java.net.http.HttpClient)
     */
    public Builder sslContext(javax.net.ssl.SSLContext sslContext) {
      settings.sslContext = Objects.requireNonNull(sslContext, "sslContext");
      return this;
    }

    /**
     * Sets the proxy selector of the provider's own HTTP client (by default the client connects
     * directly, whatever the JVM's default selector says). {@code https} traffic is tunnelled
     * through the proxy with {@code CONNECT}; a TLS-inspecting proxy also needs its CA in
     * {@link #sslContext}.
     *
     * @param proxy chooses the proxy for each request, e.g.
     *     {@code ProxySelector.of(new InetSocketAddress("proxy.corp", 3128))}
     * @return this
     */
    public Builder proxy(java.net.ProxySelector proxy) {
      settings.proxy = Objects.requireNonNull(proxy, "proxy");
      return this;
    }

    /**
     * Sets the executor the provider's own HTTP client runs its work on, instead of a
     * virtual-thread-per-task executor of its own. The provider does not shut it down.
     *
     * @param executor where the HTTP client's asynchronous work runs
     * @return this
     */
    public Builder executor(java.util.concurrent.Executor executor) {
      settings.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Sets the API key.
     *
     * @param apiKey the key sent as {@code X-API-KEY}; overrides {@code E2B_API_KEY}. A blank key
     *     is refused here, rather than kept and failing later as "no key"
     * @return this
     */
    public Builder apiKey(String apiKey) {
      settings.apiKey = ProviderSettings.nonBlank(apiKey, "apiKey");
      return this;
    }

    /**
     * Sets the control plane's base URL.
     *
     * @param apiUrl the control-plane base URL; overrides {@code E2B_API_URL}
     * @return this
     */
    public Builder apiUrl(URI apiUrl) {
      settings.apiUrl = ProviderSettings.parseUrl(Objects.requireNonNull(apiUrl, "apiUrl").toString(), "apiUrl");
      return this;
    }

    /**
     * Sets one daemon URL for every sandbox, instead of a host per sandbox under the domain.
     *
     * @param sandboxUrl one daemon URL for every sandbox, routed by header (how a local server is
     *     reached); overrides {@code E2B_SANDBOX_URL}
     * @return this
     */
    public Builder sandboxUrl(URI sandboxUrl) {
      settings.sandboxUrl = ProviderSettings.parseUrl(Objects.requireNonNull(sandboxUrl, "sandboxUrl").toString(), "sandboxUrl");
      return this;
    }

    /**
     * Sets the domain the control plane and the sandboxes are reached under.
     *
     * @param domain E2B's domain, e.g. {@code e2b.app}; overrides {@code E2B_DOMAIN}
     * @return this
     */
    public Builder domain(String domain) {
      settings.domain = ProviderSettings.hostName(domain);
      return this;
    }

    /**
     * Sets how long a single HTTP call may take (default 60 seconds), to the control plane and to
     * the sandboxes; {@link E2BApi#withRequestTimeout(Duration)} sets it for some calls only.
     *
     * @param requestTimeout how long one HTTP call may take; zero for no limit
     * @return this
     */
    public Builder requestTimeout(Duration requestTimeout) {
      settings.requestTimeout = ProviderSettings.notNegative(requestTimeout, "requestTimeout");
      return this;
    }

    /**
     * Sets how many times a control-plane call answered HTTP 429 (too many requests) is sent again,
     * as E2B's SDKs' {@code retries} (default 3). Only an answer whose {@code Retry-After} names a
     * wait in whole seconds is retried, after that wait, and only while the wait ends within the
     * call's request timeout (counted from its first send; 60 s of waiting when there is no
     * timeout). A 429 left over is thrown as {@link io.sandboxes.SandboxRateLimitException}. Calls
     * to a sandbox's daemon are never retried.
     *
     * @param retries how many times to retry, 0 for never
     * @return this
     * @throws IllegalArgumentException when {@code retries} is negative
     * @see E2BApi#withRetries(int)
     */
    public Builder retries(int retries) {
      settings.retries = ProviderSettings.notNegative(retries, "retries");
      return this;
    }

    /**
     * Reads the {@code E2B_*} settings from a map instead of the process environment.
     *
     * @param environment where to read {@code E2B_*} variables instead of the process environment
     * @return this
     */
    public Builder environment(Map<String, String> environment) {
      settings.environment = Map.copyOf(environment)::get;
      return this;
    }

    /**
     * Attaches a resource that the provider closes after its own, e.g. the local server it talks to.
     *
     * @param resource closed by {@link E2BSandboxProvider#close()}, in reverse order of attachment
     * @return this
     */
    public Builder closing(AutoCloseable resource) {
      settings.closing.add(Objects.requireNonNull(resource, "resource"));
      return this;
    }

    /**
     * Sets the default template.
     *
     * @param templateId the template sandboxes boot from unless their config names one; overrides
     *     {@code E2B_TEMPLATE_ID}; {@code base} otherwise
     * @return this
     */
    public Builder templateId(String templateId) {
      settings.templateId = ProviderSettings.nonBlank(templateId, "templateId");
      return this;
    }

    /**
     * Sets the default sandbox lifetime.
     *
     * @param timeout the lifetime of created and reconnected sandboxes (default one hour)
     * @return this
     */
    public Builder defaultTimeout(Duration timeout) {
      settings.defaultTimeout = ProviderSettings.positive(timeout, "defaultTimeout");
      return this;
    }

    /**
     * Sets the default preview port.
     *
     * @param port the port {@link Sandbox#previewUrl()} points at (default 5173)
     * @return this
     */
    public Builder defaultPreviewPort(int port) {
      settings.defaultPreviewPort = ProviderSettings.port(port, "defaultPreviewPort");
      return this;
    }

    /**
     * Sets the allow-list every created sandbox gets.
     *
     * @param allowOut domains ({@code *.} wildcards), IPs and CIDRs every created sandbox may reach;
     *     when not empty, it is sent deny-by-default in each create request
     * @return this
     * @throws IllegalArgumentException when an entry is not a domain, {@code *.}domain, IP or CIDR
     */
    public Builder defaultAllowOut(List<String> allowOut) {
      settings.defaultAllowOut = ProviderSettings.allowList(allowOut);
      return this;
    }

    /**
     * Sets the targets egress verification probes.
     *
     * @param probe what {@link E2BSandboxProvider#verifyEgress()} probes. By default: E2B's public
     *     probe for a remote control plane, and for one on loopback the witnesses it names (a
     *     local server is never made to probe public hosts)
     * @return this
     */
    public Builder egressProbe(io.sandboxes.EgressProbe probe) {
      settings.egressProbe = Objects.requireNonNull(probe, "probe");
      return this;
    }

    /**
     * Sets how preview URLs are formed.
     *
     * @param previewUrls what {@link Sandbox#previewUrl(int)} answers, given a sandbox id and a
     *     port, instead of E2B's {@code https://<port>-<id>.<domain>}: for a server that reaches
     *     sandbox ports its own way ({@code Sandboxes.local()} sets the local runtime's port
     *     forwarding here)
     * @return this
     */
    public Builder previewUrls(java.util.function.BiFunction<String, Integer, String> previewUrls) {
      settings.previewUrls = Objects.requireNonNull(previewUrls, "previewUrls");
      return this;
    }

    /**
     * Tags every request's {@code User-Agent} after this client's name, as E2B's {@code ConnectionConfig.setIntegration}.
     *
     * @param integration product tokens such as {@code my-agent/1.2}, separated by single spaces
     * @return this
     * @throws IllegalArgumentException when it is not such tokens
     */
    public Builder integration(String integration) {
      settings.userAgent = io.sandboxes.e2b.internal.Identity.userAgent(Objects.requireNonNull(integration, "integration"));
      return this;
    }

    /**
     * Creates the provider, filling unset values from the environment and then E2B's defaults.
     *
     * @return the provider
     * @throws IllegalStateException when {@link #httpClient} was given together with
     *     {@link #sslContext}, {@link #proxy} or {@link #executor}
     */
    public E2BSandboxProvider build() {
      return new E2BSandboxProvider(settings.resolve());
    }
  }
}
