package io.sandboxes.e2b.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * How this client names itself on the wire, the way E2B's official SDKs do: a {@code User-Agent}
 * of SDK name and version on every request (control plane and envd), and on control-plane
 * requests the SDKs' metadata headers ({@code lang}, {@code lang_version}, {@code package_version},
 * {@code publisher}, {@code sdk_runtime}, {@code system}) with this client's own values. The JS SDK
 * 2.51 sends {@code e2b-js-sdk/2.51.0}, {@code lang: js}, {@code publisher: e2b},
 * {@code sdk_runtime: node} and a {@code browser} header; this client is not E2B's, so it claims
 * neither their name nor their publisher, and sends no {@code browser}.
 */
public final class Identity {
  /** The SDK name in the {@code User-Agent}. */
  public static final String SDK_NAME = "sandboxes-java";
  /** This client's version, from the build; {@code unknown} when the build left none. */
  public static final String VERSION = readVersion();
  /** {@code sandboxes-java/<version>}. */
  public static final String USER_AGENT = SDK_NAME + "/" + VERSION;

  private static final Map<String, String> API_HEADERS = apiHeaders();

  private Identity() {}

  /**
   * The {@code User-Agent} with an integration's tag after this client's own, as E2B's
   * {@code ConnectionConfig.setIntegration} appends one: {@code sandboxes-java/<version> <tag>}.
   *
   * @param integration product tokens ({@code name} or {@code name/version}) separated by single
   *     spaces, or null for none
   * @throws IllegalArgumentException when the tag is not such tokens (it would break every request)
   */
  public static String userAgent(@Nullable String integration) {
    if (integration == null) {
      return USER_AGENT;
    }
    if (!PRODUCTS.matcher(integration).matches()) {
      throw new IllegalArgumentException("integration must be product tokens such as 'my-agent/1.2' separated by single "
          + "spaces, got '" + Json.abbreviate(integration) + "'");
    }
    return USER_AGENT + " " + integration;
  }

  private static final java.util.regex.Pattern PRODUCTS =
      java.util.regex.Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+(/[!#$%&'*+.^_`|~0-9A-Za-z-]+)?( [!#$%&'*+.^_`|~0-9A-Za-z-]+(/[!#$%&'*+.^_`|~0-9A-Za-z-]+)?)*");

  /** Puts the {@code User-Agent} on a request: what envd requests carry, as the SDKs' do. */
  public static HttpRequest.Builder userAgent(HttpRequest.Builder b) {
    return b.header("User-Agent", USER_AGENT);
  }

  /** Puts the metadata headers of control-plane requests on a request (the {@code User-Agent} aside). */
  public static HttpRequest.Builder apiHeaders(HttpRequest.Builder b) {
    API_HEADERS.forEach(b::header);
    return b;
  }

  /** The metadata headers of control-plane requests, in the order they are sent. */
  public static Map<String, String> apiHeaderValues() {
    return API_HEADERS;
  }

  private static Map<String, String> apiHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("lang", "java");
    h.put("lang_version", Runtime.version().toString());
    h.put("package_version", VERSION);
    h.put("publisher", "sandboxes");
    h.put("sdk_runtime", "jvm");
    h.put("system", headerSafe(System.getProperty("os.name", "unknown")));
    return java.util.Collections.unmodifiableMap(h);
  }

  /** A header value of visible ASCII only (an odd {@code os.name} must not break every request). */
  private static String headerSafe(String s) {
    String cleaned = s.chars().filter(c -> c >= 0x20 && c < 0x7f).collect(StringBuilder::new, StringBuilder::appendCodePoint,
        StringBuilder::append).toString().strip();
    return cleaned.isEmpty() ? "unknown" : cleaned;
  }

  private static String readVersion() {
    try (InputStream in = Identity.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("version", "").strip();
      return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
    } catch (IOException e) {
      return "unknown";
    }
  }
}
