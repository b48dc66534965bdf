package io.sandboxes.local.internal.egress;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's header rules as the gateway applies them: for each destination key (a name, a
 * {@code *.} wildcard, an IP or a CIDR, as E2B's {@code network.rules} has them) the headers its
 * rules set, in the rules' order (a later rule's value for a header replaces an earlier one's).
 * Values may hold E2B's secret placeholder, {@code ${e2b.secrets.<name>}}, filled in only when a
 * request is sent ({@link #fill}).
 *
 * @param byHost the headers to set, by destination key (lower case)
 */
public record HeaderRules(Map<String, Map<String, String>> byHost) {
  /** No rules: nothing is intercepted. */
  public static final HeaderRules NONE = new HeaderRules(Map.of());
  /** E2B's placeholder for a secret ({@code Secret.fill}). */
  public static final Pattern SECRET = Pattern.compile("\\$\\{e2b\\.secrets\\.([^}]*)}");

  public HeaderRules {
    Map<String, Map<String, String>> copy = new LinkedHashMap<>();
    byHost.forEach((k, v) -> copy.put(k.toLowerCase(Locale.ROOT), java.util.Collections.unmodifiableMap(new LinkedHashMap<>(v))));
    byHost = java.util.Collections.unmodifiableMap(copy);
  }

  /** Builds the rules from E2B's shape: each key's ordered list of header maps (a rule without headers sets none). */
  public static HeaderRules of(Map<String, List<Map<String, String>>> rules) {
    Map<String, Map<String, String>> byHost = new LinkedHashMap<>();
    rules.forEach((host, list) -> {
      Map<String, String> merged = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      list.forEach(merged::putAll);
      if (!merged.isEmpty()) {
        byHost.put(host, merged);
      }
    });
    return new HeaderRules(byHost);
  }

  /**
   * The headers the rules set for a request to {@code host}: an exact key first, then the
   * longest {@code *.} wildcard it falls under; for an IP literal the same IP, then a CIDR that
   * holds it.
   *
   * @return the headers, or null when no rule names the destination (it is then not intercepted)
   */
  public @Nullable Map<String, String> headersFor(String host) {
    if (byHost.isEmpty()) {
      return null;
    }
    String h = host.toLowerCase(Locale.ROOT);
    if (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    Map<String, String> exact = byHost.get(h);
    if (exact != null) {
      return exact;
    }
    InetAddress literal = Destinations.v4(h);
    Map<String, String> best = null;
    int bestLength = -1;
    for (Map.Entry<String, Map<String, String>> e : byHost.entrySet()) {
      String key = e.getKey();
      if (literal != null) {
        if (key.contains("/") && EgressPolicy.isIpOrCidr(key) && Destinations.inCidr(literal, key)) {
          return e.getValue();
        }
      } else if (key.startsWith("*.") && h.endsWith(key.substring(1)) && key.length() > bestLength) {
        best = e.getValue();
        bestLength = key.length();
      }
    }
    return best;
  }

  /** Every secret name the rules fill in, in lower case. */
  public java.util.Set<String> secretNames() {
    java.util.Set<String> names = new java.util.TreeSet<>();
    byHost.values().forEach(m -> m.values().forEach(v -> {
      Matcher matcher = SECRET.matcher(v);
      while (matcher.find()) {
        names.add(matcher.group(1).trim().toLowerCase(Locale.ROOT));
      }
    }));
    return names;
  }

  /**
   * A header value with its secrets filled in from {@code secrets}.
   *
   * @throws IllegalStateException naming nothing of the secret when one is gone or its value
   *     cannot be a header's (a line break in it)
   */
  public static String fill(String value, java.util.function.Function<String, @Nullable String> secrets) {
    Matcher m = SECRET.matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String v = secrets.apply(m.group(1).trim().toLowerCase(Locale.ROOT));
      if (v == null) {
        throw new IllegalStateException("a secret the rule fills in no longer exists on the server");
      }
      if (v.indexOf('\r') >= 0 || v.indexOf('\n') >= 0) {
        throw new IllegalStateException("a secret the rule fills in holds a line break, which no header value may");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(v));
    }
    m.appendTail(out);
    return out.toString();
  }
}
