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
  private final E2BApi api;
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
    this.api = new E2BApi(this, http, controlPlane, sandboxUrl, domain);
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

  void ensureOpen() {
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

  static void requirePositive(Duration d, String name) {
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
