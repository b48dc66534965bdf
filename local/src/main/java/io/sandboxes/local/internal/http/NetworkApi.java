package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.NetworkPolicy;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's network policy: E2B's {@code network} at create and its update
 * ({@code PUT /sandboxes/{id}/network}), checked here, enforced by the registry's network.
 */
final class NetworkApi {
  /** The network field that makes a sandbox's ports need its traffic token when false. */
  static final String ALLOW_PUBLIC_TRAFFIC = "allowPublicTraffic";
  private static final Pattern CIDR = Pattern.compile(
      "^((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)(/(3[0-2]|[12]?\\d))?$");
  private static final Pattern DOMAIN = Pattern.compile(
      "^(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$");

  private final Registry registry;
  private final Lookup lookup;
  /** E2B's default egress: a create that does not say {@code allow_internet_access} gets it (else: nothing reachable). */
  private final boolean internetByDefault;

  /** Where the secrets rules fill in are kept; null: no rule may fill one in. */
  private final io.sandboxes.local.internal.secrets.@Nullable SecretStore secrets;

  NetworkApi(Registry registry, Lookup lookup, boolean internetByDefault,
      io.sandboxes.local.internal.secrets.@Nullable SecretStore secrets) {
    this.registry = registry;
    this.lookup = lookup;
    this.internetByDefault = internetByDefault;
    this.secrets = secrets;
  }

  void routes(RouteTable.Builder t) {
    t.on("PUT", "/sandboxes/([^/]+)/network", (ex, m) -> update(ex, lookup.find(m.group(1))));
  }

  /** The internet access a new sandbox gets: what it asked for, else this server's default (null: none said). */
  @Nullable Boolean applied(@Nullable Boolean asked) {
    return asked != null ? asked : internetByDefault ? Boolean.TRUE : null;
  }

  /**
   * Stores a sandbox's network policy, as E2B's {@code SandboxNetworkUpdateConfig} (a full
   * replace). The local runtime's sandboxes have no network at all, so every policy is
   * enforced as "nothing reachable" until the egress gateway exists; the policy is stored and
   * reported so that callers see what they asked for.
   */
  private void update(Exchange ex, LocalSandbox s) throws RpcError, IOException {
    PolicyBody body = RequestBody.read(ex, PolicyBody.class);
    // how its ports are reached (the traffic token, the Host mask) is fixed at create, as on E2B: an update keeps it
    NetworkPolicy asked = parse(body);
    NetworkPolicy before = s.network();
    if (asked.maskRequestHost() != null && !asked.maskRequestHost().equals(before == null ? null : before.maskRequestHost())) {
      throw new RpcError("invalid_argument", "'maskRequestHost' is fixed when the sandbox is created; an update cannot change it");
    }
    NetworkPolicy network = asked.withPortAccessOf(before);
    if (s.paused()) {
      throw new RpcError("already_exists", "sandbox " + s.id() + " is paused; resume it to change its network");
    }
    Boolean internet = body.internetAccess();
    refuseUnenforceable(network);
    refuseUnreachableProxy(network);
    registry.setNetwork(s, network, internet);
    ex.empty(204);
  }

  /** Says which egress applies to a new sandbox, and why: what it asked for, or which default. */
  String egressNote(@Nullable NetworkPolicy network, @Nullable Boolean asked, @Nullable Boolean applied) {
    if (!registry.egressEnforced()) {
      return "no network at all: this server cannot enforce egress (it needs root on the Docker host, nsenter and iptables)";
    }
    boolean allowList = network != null && network.allowsSomething();
    if (asked != null) {
      return asked ? "open (allow_internet_access: true, as asked), less denyOut"
          : allowList ? "only network.allowOut (allow_internet_access: false, as asked)" : "nothing reachable (allow_internet_access: false, as asked)";
    }
    if (Boolean.TRUE.equals(applied)) {
      return "open, less denyOut: allow_internet_access was not given, and this server applies E2B's default (open unless told otherwise)";
    }
    return (allowList ? "only network.allowOut" : "nothing reachable")
        + ": allow_internet_access was not given, and this server's default is deny (E2B's is open; see --internet-by-default)";
  }

  /**
   * Where egress cannot be enforced, sandboxes have no network at all; a policy that would allow
   * something is refused rather than stored and silently not honoured. (E2B's SDK 2.45 sends
   * {@code allow_internet_access: true} by default; that one is accepted and reported as what it
   * is here: no network.)
   */
  void refuseUnenforceable(@Nullable NetworkPolicy network) throws RpcError {
    if (network != null && network.rules() != null && !network.rules().isEmpty()) {
      if (!registry.egressEnforced()) {
        throw new RpcError("unimplemented", "'rules' cannot be applied: this local runtime cannot enforce egress (it needs the server"
            + " to run as root on the Docker host, with nsenter and iptables), so there is no egress gateway to set headers");
      }
      for (String name : network.headerRules().secretNames()) {
        if (secrets == null || secrets.byName(name).isEmpty()) {
          throw new RpcError("invalid_argument", "'rules' fill in secret '" + name + "', which does not exist on this server: create it"
              + " first (POST /secrets)");
        }
      }
    }
    if (registry.egressEnforced()) {
      return;
    }
    if (network != null && (network.allowsSomething() || network.egressProxy() != null)) {
      throw new RpcError("unimplemented", "this local runtime cannot enforce an allow-list (egress needs the server to run as root"
          + " on the Docker host, with nsenter and iptables); its sandboxes have no network at all");
    }
  }

  /**
   * E2B's network policy, at create ({@code network}) and as an update's body. The lists are
   * bound when checked, in this order (allowOut's entries are checked before denyOut is read);
   * their entries are read as text ({@link Lenient.TextEntries}); rules are checked by {@link NetworkRules}.
   */
  record PolicyBody(@Refusal("'" + ALLOW_PUBLIC_TRAFFIC + "' must be true or false") RequestBody.@Nullable Later<Boolean> allowPublicTraffic,
      @Refusal("'allowOut' must be a list") RequestBody.@Nullable Later<Lenient.TextEntries> allowOut,
      @Refusal("'denyOut' must be a list") RequestBody.@Nullable Later<Lenient.TextEntries> denyOut,
      @Nullable JsonNode rules, @Nullable JsonNode egressProxy,
      @JsonProperty("allow_internet_access") Lenient.@Nullable Flag internet,
      @Nullable JsonNode maskRequestHost, @Nullable JsonNode httpsPorts) {

    /** The internet access asked for: null when not said, else as {@code asBoolean} reads it. */
    @Nullable Boolean internetAccess() {
      return internet == null ? null : internet.or(false);
    }
  }

  /** Checks a policy and keeps what it holds: public traffic, the allow and deny lists, the header rules, the egress proxy. */
  static NetworkPolicy parse(PolicyBody body) throws RpcError {
    Boolean pub = RequestBody.Later.of(body.allowPublicTraffic());
    List<String> allowOut = entries("allowOut", RequestBody.Later.of(body.allowOut()));
    List<String> denyOut = entries("denyOut", RequestBody.Later.of(body.denyOut()));
    UnservedFields.network(body.httpsPorts());
    return new NetworkPolicy(pub, allowOut, denyOut, NetworkRules.parse(body.rules()), egressProxy(body.egressProxy()),
        maskRequestHost(body.maskRequestHost()));
  }

  /** The longest Host mask taken: a host name's 253 characters, a port, and room for the variable. */
  static final int MAX_MASK = 280;

  /**
   * E2B's {@code maskRequestHost}: absent, null or empty for none, else the text of a Host header
   * ({@code ${PORT}} standing for the port): printable ASCII without spaces, at most {@link #MAX_MASK} characters.
   */
  private static @Nullable String maskRequestHost(@Nullable JsonNode mask) throws RpcError {
    if (mask == null || mask.isNull() || (mask.isTextual() && mask.asText().isEmpty())) {
      return null;
    }
    if (!mask.isTextual() || mask.asText().length() > MAX_MASK || !mask.asText().chars().allMatch(c -> c > ' ' && c < 0x7f)) {
      throw new RpcError("invalid_argument", "'maskRequestHost' must be a Host header's text (printable ASCII without spaces, at most "
          + MAX_MASK + " characters; ${PORT} stands for the port), e.g. 'localhost:${PORT}'");
    }
    return mask.asText();
  }

  /**
   * E2B's {@code egressProxy}: absent or null for none, else an object with a text {@code address}
   * ({@code host:port}) and, optionally, a text {@code username} and {@code password} (null read as
   * absent, as E2B's SDKs send it). Errors name the field, never the password.
   */
  private static NetworkPolicy.@Nullable EgressProxySetting egressProxy(@Nullable JsonNode p) throws RpcError {
    if (p == null || p.isNull()) {
      return null;
    }
    if (!p.isObject() || !p.path("address").isTextual()) {
      throw new RpcError("invalid_argument", "'egressProxy' must be an object with a text 'address' (host:port, e.g. 'proxy.example.com:1080')");
    }
    String[] texts = new String[2];
    String[] names = {"username", "password"};
    for (int i = 0; i < 2; i++) {
      JsonNode v = p.get(names[i]);
      if (v != null && !v.isNull() && !v.isTextual()) {
        throw new RpcError("invalid_argument", "'egressProxy." + names[i] + "' must be text");
      }
      texts[i] = v == null || v.isNull() ? null : v.asText();
    }
    try {
      io.sandboxes.local.internal.egress.UpstreamProxy.socks5(p.get("address").asText(), texts[0], texts[1]);
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", e.getMessage().replace("a proxy's", "'egressProxy'") + "");
    }
    return new NetworkPolicy.EgressProxySetting(p.get("address").asText(), texts[0], texts[1]);
  }

  /**
   * Refuses an {@code egressProxy} the gateway may not connect to for this sandbox: one whose
   * name does not resolve, or resolves to anything the sandbox could not reach itself with
   * internet access (this host, loopback, other sandboxes, a private address its allow-list does
   * not name by IP or CIDR). Checked before a create makes anything, and on update before the
   * policy is stored; the gateway checks again at each connection.
   */
  void refuseUnreachableProxy(@Nullable NetworkPolicy network) throws RpcError {
    NetworkPolicy.EgressProxySetting p = network == null ? null : network.egressProxy();
    if (p == null) {
      return;
    }
    List<String> allowOut = network.allowOut() == null ? List.of() : network.allowOut();
    String why = registry.egressProxyRefusal(io.sandboxes.local.internal.egress.UpstreamProxy.socks5(p.address(), p.username(),
        p.password()), new io.sandboxes.local.internal.egress.EgressPolicy(allowOut, List.of(), true));
    if (why != null) {
      throw new RpcError("invalid_argument", "'egressProxy' " + p.address() + " cannot be used: " + why);
    }
  }

  private static @Nullable List<String> entries(String field, Lenient.@Nullable TextEntries list) throws RpcError {
    if (list == null) {
      return null;
    }
    List<String> copy = new ArrayList<>();
    for (String v : list.values()) {
      boolean ok = CIDR.matcher(v).matches() || (field.equals("allowOut") && DOMAIN.matcher(v).matches());
      if (!ok) {
        throw new RpcError("invalid_argument", "'" + v + "' is not a valid " + (field.equals("allowOut") ? "domain, IP or CIDR" : "IP or CIDR"));
      }
      copy.add(v);
    }
    return copy;
  }
}
