package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The E2B provider: creates, finds, lists and kills sandboxes through E2B's control plane, and
 * hands out {@link E2BSandbox} handles that talk to each sandbox's daemon.
 *
 * <p>It speaks E2B's real protocol, so it works against E2B's cloud, a self-hosted E2B, or the
 * local runtime ({@code sandboxes-local}). Configuration comes from the builder, then from the
 * environment: {@code E2B_API_KEY}, {@code E2B_API_URL}, {@code E2B_SANDBOX_URL}, {@code E2B_DOMAIN}.
 *
 * <pre>{@code
 * try (E2BSandboxProvider e2b = E2BSandboxProvider.fromEnvironment();
 *      E2BSandbox sandbox = e2b.create(SandboxSpec.defaults())) {
 *   System.out.println(sandbox.exec("uname -a").stdout());
 * }
 * }</pre>
 *
 * <p>Thread-safe. Owns an HTTP client and its virtual-thread executor; {@link #close()} releases
 * them (and anything attached with {@link Builder#closing(AutoCloseable)}), but does not kill the
 * sandboxes it created: those are closed one by one, or end at their timeout.
 *
 * @since 0.1
 */
public final class E2BSandboxProvider implements AutoCloseable {

  /** E2B's domain, used when neither the builder nor {@code E2B_DOMAIN} names one. */
  public static final String DEFAULT_DOMAIN = "e2b.app";

  /** The time a single HTTP call may take, as E2B's SDKs default: 60 seconds. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final URI apiUrl;
  private final @Nullable URI sandboxUrl;
  private final String domain;
  private final Http http;
  private final ControlPlane controlPlane;
  private final List<AutoCloseable> closing;
  private final AtomicBoolean closed = new AtomicBoolean();

  private E2BSandboxProvider(Builder b) {
    Function<String, @Nullable String> env = b.environment;
    String apiKey = firstNonBlank(b.apiKey, env.apply("E2B_API_KEY"));
    this.domain = Objects.requireNonNull(firstNonBlank(b.domain, env.apply("E2B_DOMAIN"), DEFAULT_DOMAIN));
    URI api = b.apiUrl;
    if (api == null) {
      String fromEnv = firstNonBlank(env.apply("E2B_API_URL"));
      api = fromEnv != null ? parseUrl(fromEnv, "E2B_API_URL") : URI.create("https://api." + domain);
    }
    this.apiUrl = api;
    URI sbx = b.sandboxUrl;
    if (sbx == null) {
      String fromEnv = firstNonBlank(env.apply("E2B_SANDBOX_URL"));
      sbx = fromEnv != null ? parseUrl(fromEnv, "E2B_SANDBOX_URL") : null;
    }
    this.sandboxUrl = sbx;
    this.http = new Http(b.requestTimeout);
    this.controlPlane = new ControlPlane(http, apiUrl, apiKey);
    this.closing = List.copyOf(b.closing);
  }

  /** @return a builder; unset values come from the environment */
  public static Builder builder() {
    return new Builder();
  }

  /** @return a provider configured entirely from the environment variables */
  public static E2BSandboxProvider fromEnvironment() {
    return builder().build();
  }

  /** @return the control-plane base URL in use */
  public URI apiUrl() {
    return apiUrl;
  }

  /**
   * @return the daemon URL shared by all sandboxes, when one is configured; otherwise each
   *     sandbox is reached at {@code https://49983-<id>.<domain>}
   */
  public Optional<URI> sandboxUrl() {
    return Optional.ofNullable(sandboxUrl);
  }

  /** @return a new sandbox from the {@code base} template with the default timeout */
  public E2BSandbox create() {
    return create(SandboxSpec.defaults());
  }

  /**
   * Creates a sandbox and returns a handle to it once the control plane has answered.
   *
   * @param spec template, timeout, environment and metadata
   * @return the live sandbox; close it to kill it
   */
  public E2BSandbox create(SandboxSpec spec) {
    ensureOpen();
    ObjectNode body = Json.object()
        .put("templateID", spec.template())
        .put("timeout", seconds(spec.timeout()))
        .put("secure", true);
    if (spec.onTimeout() != io.sandboxes.OnTimeout.KILL) {
      body.put("autoPause", true);
      body.put("autoPauseMemory", spec.onTimeout() == io.sandboxes.OnTimeout.PAUSE);
    }
    if (spec.autoResume()) {
      body.putObject("autoResume").put("enabled", true);
    }
    body.set("metadata", Json.toObject(spec.metadata()));
    body.set("envVars", Json.toObject(spec.env()));
    if (!spec.volumes().isEmpty()) {
      com.fasterxml.jackson.databind.node.ArrayNode mounts = body.putArray("volumeMounts");
      spec.volumes().forEach(v -> mounts.addObject().put("name", v.volume()).put("path", v.path()));
    }
    JsonNode sandbox = controlPlane.create(body);
    return handle(sandbox, "create sandbox");
  }

  /**
   * Connects to an existing sandbox, resuming it if it is paused, and extends its timeout to at
   * least {@code timeout} from now.
   *
   * @throws SandboxNotFoundException when the server says there is no such sandbox
   */
  public E2BSandbox connect(String sandboxId, Duration timeout) {
    ensureOpen();
    requirePositive(timeout, "timeout");
    return handle(controlPlane.connect(sandboxId, seconds(timeout)), "connect to sandbox " + sandboxId);
  }

  /** Connects with the default 5 minute timeout. @see #connect(String, Duration) */
  public E2BSandbox connect(String sandboxId) {
    return connect(sandboxId, SandboxSpec.DEFAULT_TIMEOUT);
  }

  /**
   * Looks a sandbox up and connects to it.
   *
   * @return the handle, or empty when the server positively says the sandbox does not exist
   * @throws SandboxException for any other failure: a failure to look is never reported as absence
   */
  public Optional<E2BSandbox> get(String sandboxId) {
    try {
      return Optional.of(connect(sandboxId));
    } catch (SandboxNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * Reads what the control plane knows of a sandbox without connecting to it, so a paused
   * sandbox stays paused.
   *
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public SandboxInfo info(String sandboxId) {
    ensureOpen();
    return toInfo(controlPlane.info(sandboxId));
  }

  /**
   * Reads one page of the listing.
   *
   * @throws SandboxException when the listing cannot be read; never an empty page instead
   */
  public SandboxPage list(SandboxQuery query) {
    ensureOpen();
    List<String> states = query.states().stream().map(SandboxState::wireName).sorted().toList();
    ControlPlane.Page page = controlPlane.list(states, query.metadata(), query.limit(), query.nextToken());
    List<SandboxInfo> items = new ArrayList<>(page.rows().size());
    for (JsonNode row : page.rows()) {
      items.add(toInfo(row));
    }
    return new SandboxPage(items, page.nextToken());
  }

  /** Reads every page of the listing. @see #list(SandboxQuery) */
  public List<SandboxInfo> listAll(SandboxQuery query) {
    List<SandboxInfo> all = new ArrayList<>();
    SandboxQuery q = query.withNextToken(null);
    while (true) {
      SandboxPage page = list(q);
      all.addAll(page.items());
      if (!page.hasNext()) {
        return all;
      }
      q = q.withNextToken(page.nextTokenValue());
    }
  }

  /**
   * Kills a sandbox, running or paused.
   *
   * @return true when it was killed, false when the server says it did not exist
   */
  public boolean kill(String sandboxId) {
    ensureOpen();
    return controlPlane.kill(sandboxId);
  }

  /**
   * Pauses a sandbox. A paused sandbox runs nothing and keeps no deadline; {@link #connect}
   * resumes it.
   *
   * @param keepMemory true to keep memory and processes (they carry on after resume), false to
   *     keep only the filesystem
   * @return true when it is paused now, false when it already was
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public boolean pause(String sandboxId, boolean keepMemory) {
    ensureOpen();
    return controlPlane.pause(sandboxId, keepMemory);
  }

  /**
   * Sets a sandbox to end {@code timeout} from now (it may shorten the current deadline).
   *
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public void setTimeout(String sandboxId, Duration timeout) {
    ensureOpen();
    requirePositive(timeout, "timeout");
    controlPlane.setTimeout(sandboxId, seconds(timeout));
  }

  // ---- volumes ----

  /**
   * Creates a named volume.
   *
   * @param name letters, digits, '_' and '-'
   * @throws io.sandboxes.SandboxApiException with status 409 when the name is taken
   */
  public VolumeInfo createVolume(String name) {
    ensureOpen();
    return toVolume(controlPlane.createVolume(Objects.requireNonNull(name, "name")));
  }

  /** @return every volume of the account */
  public List<VolumeInfo> listVolumes() {
    ensureOpen();
    return controlPlane.listVolumes().stream().map(E2BSandboxProvider::toVolume).toList();
  }

  /** @return the volume, or empty when the server positively says there is none */
  public Optional<VolumeInfo> getVolume(String volumeId) {
    ensureOpen();
    JsonNode v = controlPlane.getVolume(volumeId);
    return v == null ? Optional.empty() : Optional.of(toVolume(v));
  }

  /**
   * Deletes a volume and its data.
   *
   * @return false when there was no such volume
   */
  public boolean deleteVolume(String volumeId) {
    ensureOpen();
    return controlPlane.deleteVolume(volumeId);
  }

  private static VolumeInfo toVolume(JsonNode v) {
    try {
      return new VolumeInfo(Json.requireText(v, "volumeID"), Json.requireText(v, "name"));
    } catch (RuntimeException e) {
      throw new SandboxException("a volume record of a shape this client cannot read: " + Json.abbreviate(v), e);
    }
  }

  // ---- snapshots ----

  /**
   * Captures a sandbox as a snapshot; the sandbox keeps running. The snapshot id is a template id.
   *
   * @param name the snapshot's name, or null for a generated one; re-using a name replaces it
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public SnapshotInfo createSnapshot(String sandboxId, @Nullable String name) {
    ensureOpen();
    return toSnapshot(controlPlane.createSnapshot(sandboxId, name));
  }

  /**
   * Lists snapshots, every page.
   *
   * @param sandboxId only those taken of this sandbox, or null for all
   * @param name only those with this name, or null for all
   */
  public List<SnapshotInfo> listSnapshots(@Nullable String sandboxId, @Nullable String name) {
    ensureOpen();
    List<SnapshotInfo> all = new ArrayList<>();
    String token = null;
    do {
      ControlPlane.Page page = controlPlane.listSnapshots(sandboxId, name, SandboxQuery.MAX_LIMIT, token);
      page.rows().forEach(r -> all.add(toSnapshot(r)));
      token = page.nextToken();
    } while (token != null);
    return all;
  }

  /**
   * Deletes a template, such as a snapshot.
   *
   * @return false when there was no such template
   * @throws io.sandboxes.SandboxApiException when a sandbox still uses it
   */
  public boolean deleteTemplate(String templateId) {
    ensureOpen();
    return controlPlane.deleteTemplate(templateId);
  }

  private static SnapshotInfo toSnapshot(JsonNode s) {
    try {
      List<String> names = new ArrayList<>();
      s.path("names").forEach(n -> names.add(n.asText()));
      return new SnapshotInfo(Json.requireText(s, "snapshotID"), names);
    } catch (RuntimeException e) {
      throw new SandboxException("a snapshot record of a shape this client cannot read: " + Json.abbreviate(s), e);
    }
  }

  ControlPlane controlPlane() {
    return controlPlane;
  }

  private E2BSandbox handle(JsonNode sandbox, String context) {
    String id;
    try {
      id = Json.requireText(sandbox, "sandboxID");
    } catch (IllegalArgumentException e) {
      throw new SandboxException(context + ": the answer names no sandbox: " + Json.abbreviate(sandbox), e);
    }
    String token = Json.text(sandbox, "envdAccessToken");
    String sandboxDomain = Json.text(sandbox, "domain");
    URI envdUrl = sandboxUrl != null ? sandboxUrl
        : URI.create("https://" + Envd.PORT + "-" + id + "." + (sandboxDomain == null || sandboxDomain.isBlank() ? domain : sandboxDomain));
    Envd envd = new Envd(http, envdUrl, id, token);
    return new E2BSandbox(this, id, Json.text(sandbox, "templateID"), Json.text(sandbox, "envdVersion"), envd);
  }

  static SandboxInfo toInfo(JsonNode row) {
    try {
      return new SandboxInfo(
          Json.requireText(row, "sandboxID"),
          Json.requireText(row, "templateID"),
          Json.text(row, "alias"),
          SandboxState.fromWire(Json.requireText(row, "state")),
          Json.instant(row, "startedAt"),
          Json.instant(row, "endAt"),
          Json.intValue(row, "cpuCount", 0),
          Json.intValue(row, "memoryMB", 0),
          Json.requireText(row, "envdVersion"),
          Json.stringMap(row.get("metadata")),
          volumeMounts(row.get("volumeMounts")));
    } catch (RuntimeException e) {
      throw new SandboxException("a sandbox record of a shape this client cannot read: " + Json.abbreviate(row), e);
    }
  }

  private static List<io.sandboxes.VolumeMount> volumeMounts(@Nullable JsonNode mounts) {
    List<io.sandboxes.VolumeMount> out = new ArrayList<>();
    if (mounts != null && mounts.isArray()) {
      mounts.forEach(m -> out.add(new io.sandboxes.VolumeMount(m.path("name").asText(), m.path("path").asText())));
    }
    return out;
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this E2BSandboxProvider is closed");
    }
  }

  /** Releases the HTTP client, then whatever was attached with {@link Builder#closing}. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    RuntimeException failure = null;
    try {
      http.close();
    } catch (RuntimeException e) {
      failure = e;
    }
    for (int i = closing.size() - 1; i >= 0; i--) {
      try {
        closing.get(i).close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new SandboxException("closing a resource attached to the provider failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  static long seconds(Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  private static void requirePositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
  }

  private static URI parseUrl(String value, String name) {
    try {
      URI uri = URI.create(value.strip());
      if (uri.getScheme() == null || uri.getHost() == null) {
        throw new IllegalArgumentException(name + " must be an absolute http(s) URL, got '" + value + "'");
      }
      return uri;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + " must be an absolute http(s) URL, got '" + value + "'", e);
    }
  }

  private static @Nullable String firstNonBlank(@Nullable String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v.strip();
      }
    }
    return null;
  }

  /**
   * Configures an {@link E2BSandboxProvider}. Every unset value falls back to the environment,
   * then to E2B's cloud defaults.
   */
  public static final class Builder {
    private @Nullable String apiKey;
    private @Nullable URI apiUrl;
    private @Nullable URI sandboxUrl;
    private @Nullable String domain;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private Function<String, @Nullable String> environment = System::getenv;
    private final List<AutoCloseable> closing = new ArrayList<>();

    private Builder() {}

    /** @param apiKey the key sent as {@code X-API-KEY}; overrides {@code E2B_API_KEY} @return this */
    public Builder apiKey(String apiKey) {
      if (Objects.requireNonNull(apiKey, "apiKey").isBlank()) {
        throw new IllegalArgumentException("apiKey must not be blank");
      }
      this.apiKey = apiKey;
      return this;
    }

    /** @param apiUrl the control-plane base URL; overrides {@code E2B_API_URL} @return this */
    public Builder apiUrl(URI apiUrl) {
      this.apiUrl = parseUrl(Objects.requireNonNull(apiUrl, "apiUrl").toString(), "apiUrl");
      return this;
    }

    /**
     * @param sandboxUrl one daemon URL for every sandbox, routed by header (how a local server is
     *     reached); overrides {@code E2B_SANDBOX_URL}
     * @return this
     */
    public Builder sandboxUrl(URI sandboxUrl) {
      this.sandboxUrl = parseUrl(Objects.requireNonNull(sandboxUrl, "sandboxUrl").toString(), "sandboxUrl");
      return this;
    }

    /** @param domain E2B's domain, e.g. {@code e2b.app}; overrides {@code E2B_DOMAIN} @return this */
    public Builder domain(String domain) {
      if (Objects.requireNonNull(domain, "domain").isBlank() || domain.contains("/")) {
        throw new IllegalArgumentException("domain must be a host name like 'e2b.app', got '" + domain + "'");
      }
      this.domain = domain;
      return this;
    }

    /** @param requestTimeout how long one HTTP call may take; zero for no limit @return this */
    public Builder requestTimeout(Duration requestTimeout) {
      Objects.requireNonNull(requestTimeout, "requestTimeout");
      if (requestTimeout.isNegative()) {
        throw new IllegalArgumentException("requestTimeout must not be negative, got " + requestTimeout);
      }
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param environment where to read {@code E2B_*} variables instead of the process environment
     * @return this
     */
    public Builder environment(Map<String, String> environment) {
      Map<String, String> copy = Map.copyOf(environment);
      this.environment = copy::get;
      return this;
    }

    /**
     * Attaches a resource that the provider closes after its own, e.g. the local server it talks to.
     *
     * @param resource closed by {@link E2BSandboxProvider#close()}, in reverse order of attachment
     * @return this
     */
    public Builder closing(AutoCloseable resource) {
      closing.add(Objects.requireNonNull(resource, "resource"));
      return this;
    }

    /** @return the provider */
    public E2BSandboxProvider build() {
      return new E2BSandboxProvider(this);
    }
  }
}
