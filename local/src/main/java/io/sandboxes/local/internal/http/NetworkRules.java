package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.local.internal.NetworkPolicy;
import io.sandboxes.local.internal.common.RpcError;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * E2B's {@code network.rules}, at create and on update: an object of destination (a domain, a
 * {@code *.} wildcard, an IP or a CIDR) to an ordered list of rules, each with an optional
 * {@code transform.headers} of header name to value. Checked here, bounded, kept as given (a
 * secret's placeholder stays a placeholder: it is filled in only by the egress gateway, at send).
 */
final class NetworkRules {
  static final int MAX_DESTINATIONS = 64;
  static final int MAX_RULES = 16;
  static final int MAX_HEADERS = 32;
  static final int MAX_VALUE = 8192;
  private static final Pattern TOKEN = Pattern.compile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$");
  private static final Pattern DESTINATION = Pattern.compile(
      "^(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$"
          + "|^((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)(/(3[0-2]|[12]?\\d))?$");
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");
  /** Headers that frame the request or route it: a rule that set them would break or redirect it. */
  private static final Set<String> FRAMING = Set.of("host", "content-length", "transfer-encoding", "connection", "proxy-connection",
      "keep-alive", "te", "upgrade", "trailer");

  private NetworkRules() {}

  /** @return the rules as given, or null when none are (absent, null, an empty object or list: E2B's SDKs send {@code {}}) */
  static @Nullable Map<String, List<NetworkPolicy.HostRule>> parse(@Nullable JsonNode rules) throws RpcError {
    if (rules == null || rules.isNull() || (rules.isContainerNode() && rules.isEmpty())) {
      return null;
    }
    if (!rules.isObject()) {
      throw bad("must be an object of destination to a list of rules");
    }
    if (rules.size() > MAX_DESTINATIONS) {
      throw bad("name at most " + MAX_DESTINATIONS + " destinations");
    }
    Map<String, List<NetworkPolicy.HostRule>> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : rules.properties()) {
      String host = e.getKey();
      if (!DESTINATION.matcher(host).matches()) {
        throw bad("key '" + printable(host) + "' is not a domain, a *. wildcard, an IP or a CIDR");
      }
      JsonNode list = e.getValue();
      if (!list.isArray() || list.size() > MAX_RULES) {
        throw bad("'" + host + "' must have a list of at most " + MAX_RULES + " rules");
      }
      List<NetworkPolicy.HostRule> parsed = new ArrayList<>();
      for (JsonNode rule : list) {
        parsed.add(rule(host, rule));
      }
      out.put(host.toLowerCase(Locale.ROOT), parsed);
    }
    return out;
  }

  private static NetworkPolicy.HostRule rule(String host, JsonNode rule) throws RpcError {
    if (!rule.isObject()) {
      throw bad("each rule of '" + host + "' must be an object");
    }
    JsonNode transform = rule.get("transform");
    if (transform == null || transform.isNull()) {
      return new NetworkPolicy.HostRule(null);
    }
    if (!transform.isObject()) {
      throw bad("a transform of '" + host + "' must be an object");
    }
    JsonNode headers = transform.get("headers");
    if (headers == null || headers.isNull()) {
      return new NetworkPolicy.HostRule(new NetworkPolicy.HeaderTransform(null));
    }
    if (!headers.isObject() || headers.size() > MAX_HEADERS) {
      throw bad("a transform's headers for '" + host + "' must be an object of at most " + MAX_HEADERS + " names to text");
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> h : headers.properties()) {
      String name = h.getKey();
      if (!TOKEN.matcher(name).matches()) {
        throw bad("'" + printable(name) + "' is not a header name");
      }
      if (FRAMING.contains(name.toLowerCase(Locale.ROOT))) {
        throw bad("header '" + name + "' frames or routes the request and cannot be set by a rule");
      }
      if (!h.getValue().isTextual()) {
        throw bad("header '" + name + "' for '" + host + "' must be text");
      }
      String value = h.getValue().asText();
      if (value.length() > MAX_VALUE || value.chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
        throw bad("header '" + name + "' for '" + host + "' must be at most " + MAX_VALUE + " characters, without line breaks");
      }
      Matcher m = PLACEHOLDER.matcher(value);
      while (m.find()) {
        String ref = m.group(1);
        if (ref.startsWith("e2b.identity.")) {
          throw bad("header '" + name + "' fills in a workload identity token, which E2B's cloud mints and the local runtime does not");
        }
        if (ref.startsWith("e2b.") && !ref.startsWith("e2b.secrets.")) {
          throw bad("header '" + name + "' holds '${" + printable(ref) + "}', which is no placeholder the gateway fills in");
        }
      }
      out.put(name, value);
    }
    return new NetworkPolicy.HostRule(new NetworkPolicy.HeaderTransform(out));
  }

  private static String printable(String s) {
    String cut = s.length() > 80 ? s.substring(0, 80) + "…" : s;
    return cut.replaceAll("\\p{Cntrl}", "?");
  }

  private static RpcError bad(String why) {
    return new RpcError("invalid_argument", "'rules' " + why);
  }
}
