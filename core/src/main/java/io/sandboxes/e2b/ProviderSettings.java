package io.sandboxes.e2b;

import io.sandboxes.EgressProbe;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.internal.Http;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * An {@link E2BSandboxProvider}'s configuration: what its {@link E2BSandboxProvider.Builder} was
 * given, checked as it is given, and {@link #resolve() resolved} against the environment and
 * E2B's defaults into the {@link Resolved} values the provider runs with.
 */
final class ProviderSettings {
  @Nullable String apiKey;
  @Nullable URI apiUrl;
  @Nullable URI sandboxUrl;
  @Nullable String domain;
  Duration requestTimeout = E2BSandboxProvider.DEFAULT_REQUEST_TIMEOUT;
  int retries = E2BSandboxProvider.DEFAULT_RETRIES;
  Function<String, @Nullable String> environment = System::getenv;
  @Nullable String templateId;
  Duration defaultTimeout = E2BSandboxProvider.DEFAULT_TIMEOUT;
  int defaultPreviewPort = E2BSandboxProvider.DEFAULT_PREVIEW_PORT;
  List<String> defaultAllowOut = List.of();
  @Nullable EgressProbe egressProbe;
  @Nullable BiFunction<String, Integer, String> previewUrls;
  final List<AutoCloseable> closing = new ArrayList<>();
  @Nullable HttpClient httpClient;
  @Nullable SSLContext sslContext;
  @Nullable ProxySelector proxy;
  @Nullable Executor executor;
  String userAgent = io.sandboxes.e2b.internal.Identity.USER_AGENT;

  /** What a provider runs with: every value settled, nothing left to the environment. */
  record Resolved(@Nullable String apiKey, String domain, URI apiUrl, @Nullable URI sandboxUrl, Duration requestTimeout,
      int retries, Http.Transport transport, List<AutoCloseable> closing, String templateId, Duration defaultTimeout,
      int defaultPreviewPort, List<String> defaultAllowOut, @Nullable EgressProbe egressProbe,
      @Nullable BiFunction<String, Integer, String> previewUrls, String userAgent) {}

  /**
   * The builder's values, else the {@code E2B_*} environment's, else E2B's defaults.
   *
   * @throws IllegalStateException when a client was given together with settings of the provider's own client
   * @throws IllegalArgumentException when an {@code E2B_*} URL is not an absolute URL
   */
  Resolved resolve() {
    if (httpClient != null && (sslContext != null || proxy != null || executor != null)) {
      List<String> parts = new ArrayList<>();
      if (sslContext != null) {
        parts.add("sslContext");
      }
      if (proxy != null) {
        parts.add("proxy");
      }
      if (executor != null) {
        parts.add("executor");
      }
      throw new IllegalStateException("httpClient(..) was given together with " + String.join(", ", parts)
          + "(..): those configure the provider's own client; set them on the given HttpClient instead");
    }
    Function<String, @Nullable String> env = environment;
    String key = firstNonBlank(apiKey, env.apply("E2B_API_KEY"));
    String dom = Objects.requireNonNull(firstNonBlank(domain, env.apply("E2B_DOMAIN"), E2BSandboxProvider.DEFAULT_DOMAIN));
    URI api = apiUrl;
    if (api == null) {
      String fromEnv = firstNonBlank(env.apply("E2B_API_URL"));
      api = fromEnv != null ? parseUrl(fromEnv, "E2B_API_URL") : URI.create("https://api." + dom);
    }
    URI sbx = sandboxUrl;
    if (sbx == null) {
      String fromEnv = firstNonBlank(env.apply("E2B_SANDBOX_URL"));
      sbx = fromEnv != null ? parseUrl(fromEnv, "E2B_SANDBOX_URL") : null;
    }
    String template = Objects.requireNonNull(firstNonBlank(templateId, env.apply("E2B_TEMPLATE_ID"), SandboxSpec.DEFAULT_TEMPLATE));
    return new Resolved(key, dom, api, sbx, requestTimeout, retries, new Http.Transport(httpClient, sslContext, proxy, executor),
        List.copyOf(closing), template, defaultTimeout, defaultPreviewPort, List.copyOf(defaultAllowOut), egressProbe, previewUrls, userAgent);
  }

  /**
   * The spec a seed config creates with under these settings: the config's template and timeout
   * (else the provider's), {@code projectId} winning over a label of that name, the named volume
   * at its path, and {@code allowOut} deny-by-default when not empty.
   *
   * @throws SandboxException for a boot command, or a volume named without a mount path
   */
  static SandboxSpec spec(Resolved settings, SandboxConfig config, OnTimeout onTimeout, List<String> allowOut) {
    if (config.command() != null) {
      throw new SandboxException("the e2b provider cannot run a boot command (" + config.command()
          + "): E2B sandboxes start their template's own process; run it with exec or spawn after create");
    }
    if (config.volumeName() != null && config.volumeMountPath() == null) {
      throw new SandboxException("volume '" + config.volumeName() + "' was named without a volumeMountPath: say where to mount it");
    }
    Map<String, String> metadata = new LinkedHashMap<>(config.labels());
    metadata.put("projectId", config.projectId());
    SandboxSpec spec = new SandboxSpec(config.templateId() != null ? config.templateId() : settings.templateId(),
        config.timeout() != null ? config.timeout() : settings.defaultTimeout(), config.env(), metadata, onTimeout, false,
        config.volumeName() == null ? List.of() : List.of(new VolumeMount(config.volumeName(), config.volumeMountPath())));
    if (!allowOut.isEmpty()) {
      spec = spec.withNetwork(SandboxNetwork.allowOnly(allowOut.toArray(String[]::new)));
    }
    return spec;
  }

  /** Closes the HTTP client's resources the provider owns, then the attached ones in reverse order, all of them whatever fails. */
  static void release(Http http, List<AutoCloseable> closing) {
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

  static URI parseUrl(String value, String name) {
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

  static String hostName(String domain) {
    if (Objects.requireNonNull(domain, "domain").isBlank() || domain.contains("/")) {
      throw new IllegalArgumentException("domain must be a host name like 'e2b.app', got '" + domain + "'");
    }
    return domain;
  }

  static Duration notNegative(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative, got " + d);
    }
    return d;
  }

  static int notNegative(int n, String name) {
    if (n < 0) {
      throw new IllegalArgumentException(name + " must not be negative, got " + n);
    }
    return n;
  }

  static Duration positive(Duration d, String name) {
    ApiRequests.requirePositive(d, name);
    return d;
  }

  static int port(int port, String name) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException(name + " must be between 1 and 65535, got " + port);
    }
    return port;
  }

  /** The allow-list copied, its entries checked now rather than at the first create. */
  static List<String> allowList(List<String> allowOut) {
    List<String> copy = List.copyOf(Objects.requireNonNull(allowOut, "allowOut"));
    SandboxNetwork.allowOnly(copy.toArray(String[]::new));
    return copy;
  }

  static String nonBlank(String value, String name) {
    if (Objects.requireNonNull(value, name).isBlank()) {
      throw new IllegalArgumentException(name + " must not be blank");
    }
    return value;
  }

  private static @Nullable String firstNonBlank(@Nullable String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v.strip();
      }
    }
    return null;
  }
}
