package io.sandboxes.e2b;

import io.sandboxes.e2b.internal.ControlPlane;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Settings for some calls only, as the options E2B's SDKs take on each call ({@code apiKey},
 * {@code domain}, {@code apiHeaders}, {@code requestTimeoutMs}): given to
 * {@link E2BApi#with(CallOptions)}, which answers a view of the API whose calls, and the calls of
 * the sandboxes it creates or connects to, use them. What is not set here stays as the API has it.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=call-options :
 * E2BApi other = e2b.api().with(CallOptions.defaults().withApiKey(otherKey).withHeader("X-Request-Id", "run-42"));
 * SandboxPage page = other.list(SandboxQuery.all());
 * }
 *
 * <p>Immutable. Its {@link #toString()} shows no key and no header value.
 *
 * @since 0.1
 */
public final class CallOptions {
  /** Headers the client sets itself, or the JDK does: never taken from a caller. */
  private static final Set<String> OWN_HEADERS = Set.of(ControlPlane.API_KEY_HEADER.toLowerCase(Locale.ROOT), "content-type",
      "content-length", "host", "connection", "expect", "upgrade");

  private static final CallOptions DEFAULTS = new CallOptions(null, null, Map.of(), null, null);

  private final @Nullable String apiKey;
  private final @Nullable String domain;
  private final Map<String, String> headers;
  private final @Nullable Duration requestTimeout;
  private final @Nullable Integer retries;

  private CallOptions(@Nullable String apiKey, @Nullable String domain, Map<String, String> headers,
      @Nullable Duration requestTimeout, @Nullable Integer retries) {
    this.apiKey = apiKey;
    this.domain = domain;
    this.headers = headers;
    this.requestTimeout = requestTimeout;
    this.retries = retries;
  }

  /**
   * Options that change nothing.
   *
   * @return the options
   */
  public static CallOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Sends these calls with another account's API key, as E2B's per-call {@code apiKey}.
   *
   * @param apiKey the key
   * @return a copy with it
   * @throws IllegalArgumentException when the key is blank or not one line of visible characters
   */
  public CallOptions withApiKey(String apiKey) {
    if (Objects.requireNonNull(apiKey, "apiKey").isBlank() || !visible(apiKey)) {
      throw new IllegalArgumentException("apiKey must be one line of visible characters");
    }
    return new CallOptions(apiKey, domain, headers, requestTimeout, retries);
  }

  /**
   * Reaches the control plane and the sandboxes under another domain, as E2B's per-call
   * {@code domain}: the control plane at {@code https://api.<domain>} unless the API was given an
   * API URL of its own (then that URL stays), and sandboxes whose create or connect answer names no
   * domain under this one.
   *
   * @param domain a host name such as {@code e2b.app}
   * @return a copy with it
   * @throws IllegalArgumentException when it is not a host name
   */
  public CallOptions withDomain(String domain) {
    return new CallOptions(apiKey, ProviderSettings.hostName(domain), headers, requestTimeout, retries);
  }

  /**
   * Adds a header to every control-plane request of these calls, as E2B's {@code apiHeaders}; a
   * name given again replaces its value. A {@code User-Agent} given here replaces the client's own.
   *
   * @param name the header's name, an HTTP token
   * @param value its value, one line of visible ASCII and spaces
   * @return a copy with it
   * @throws IllegalArgumentException when the name is not a token, the value not one line, or the
   *     name one the client sets itself ({@code X-API-KEY}: use {@link #withApiKey}; {@code Host},
   *     {@code Content-Type}, {@code Content-Length}, {@code Connection}, {@code Expect},
   *     {@code Upgrade})
   */
  public CallOptions withHeader(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (!name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
      throw new IllegalArgumentException("a header name must be an HTTP token, got '" + name + "'");
    }
    if (OWN_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("header " + name + " is the client's own"
          + (name.equalsIgnoreCase(ControlPlane.API_KEY_HEADER) ? "; give the key with withApiKey" : ""));
    }
    if (!value.chars().allMatch(c -> c == ' ' || c == '\t' || (c > 0x20 && c < 0x7f))) {
      throw new IllegalArgumentException("the value of header " + name + " must be one line of visible ASCII and spaces");
    }
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.keySet().removeIf(k -> k.equalsIgnoreCase(name));
    h.put(name, value);
    return new CallOptions(apiKey, domain, java.util.Collections.unmodifiableMap(h), requestTimeout, retries);
  }

  /**
   * Adds several headers, as {@link #withHeader} each.
   *
   * @param headers names and values
   * @return a copy with them
   */
  public CallOptions withHeaders(Map<String, String> headers) {
    CallOptions o = this;
    for (Map.Entry<String, String> e : Objects.requireNonNull(headers, "headers").entrySet()) {
      o = o.withHeader(e.getKey(), e.getValue());
    }
    return o;
  }

  /**
   * Lets each HTTP request of these calls take this long, as {@link E2BApi#withRequestTimeout}.
   *
   * @param requestTimeout how long; zero for no limit
   * @return a copy with it
   * @throws IllegalArgumentException when it is negative
   */
  public CallOptions withRequestTimeout(Duration requestTimeout) {
    return new CallOptions(apiKey, domain, headers, ProviderSettings.notNegative(requestTimeout, "requestTimeout"), retries);
  }

  /**
   * Retries a control-plane call answered 429 this many times, as {@link E2BApi#withRetries}.
   *
   * @param retries how many times, 0 for never
   * @return a copy with it
   * @throws IllegalArgumentException when it is negative
   */
  public CallOptions withRetries(int retries) {
    return new CallOptions(apiKey, domain, headers, requestTimeout, ProviderSettings.notNegative(retries, "retries"));
  }

  /**
   * The extra headers, in the order given.
   *
   * @return names and values
   */
  public Map<String, String> headers() {
    return headers;
  }

  /** The view of {@code api} these options make. */
  E2BApi applyTo(E2BApi api) {
    E2BApi view = requestTimeout == null ? api : api.withRequestTimeout(requestTimeout);
    view = retries == null ? view : view.withRetries(retries);
    if (apiKey == null && domain == null && headers.isEmpty()) {
      return view;
    }
    URI apiUrl = view.controlPlane.apiUrl();
    if (domain != null && apiUrl.equals(URI.create("https://api." + view.domain))) {
      apiUrl = URI.create("https://api." + domain);
    }
    Map<String, String> merged = new LinkedHashMap<>(view.controlPlane.headers());
    headers.forEach((k, v) -> {
      merged.keySet().removeIf(old -> old.equalsIgnoreCase(k));
      merged.put(k, v);
    });
    return new E2BApi(view.provider(), view.http, view.controlPlane.with(apiUrl, apiKey, merged), view.sandboxUrl,
        domain == null ? view.domain : domain);
  }

  private static boolean visible(String s) {
    return s.chars().allMatch(c -> c > 0x20 && c < 0x7f);
  }

  /** The settings, without the key or any header value. */
  @Override
  public String toString() {
    return "CallOptions[apiKey=" + (apiKey == null ? "unchanged" : "(set)") + ", domain=" + domain + ", headers="
        + headers.keySet() + ", requestTimeout=" + requestTimeout + ", retries=" + retries + "]";
  }
}
