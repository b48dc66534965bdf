package io.sandboxes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's network, as E2B's {@code network} options and {@code allowInternetAccess}: what it
 * may reach ({@link #allowOut()}, {@link #denyOut()}; an allowed destination beats a denied one),
 * the headers added to its requests to some hosts ({@link #rules()}), and how its own ports are
 * reached ({@link #allowPublicTraffic()}, {@link #maskRequestHost()}). Given to
 * {@link SandboxSpec#withNetwork(SandboxNetwork)} it is sent in the create request, so the sandbox
 * never runs under another policy; {@code sandbox.network().update(...)} replaces it on a running
 * sandbox. Immutable; each {@code with...} method returns a validated copy.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=sandbox-network :
 * SandboxSpec spec = SandboxSpec.of("base")
 *     .withNetwork(SandboxNetwork.allowOnly("pypi.org", "*.pythonhosted.org"));
 * }
 *
 * <p>A null component is left out of the request, so the server's default applies: on E2B an
 * unset {@code allowInternetAccess} means open egress, on the local runtime nothing reachable
 * (unless it runs with {@code --internet-by-default}). {@link #toString()} shows header names but
 * never their values, which often are credentials.
 *
 * @param allowOut domains ({@code *.} wildcards allowed), IPs and CIDRs the sandbox may reach
 * @param denyOut IPs and CIDRs it may not ({@link #ALL_TRAFFIC} for everything)
 * @param rules per host, the header transforms applied in order to its outgoing HTTP(S) requests;
 *     a host named here must also be allowed to be reached
 * @param allowInternetAccess whether egress is open (less {@code denyOut}); null for the server's
 *     default
 * @param allowPublicTraffic false to make requests to the sandbox's ports carry its traffic token;
 *     null for the server's default (public); fixed at create
 * @param maskRequestHost the {@code Host} header requests to its ports arrive with, {@code ${PORT}}
 *     replaced by the port; null for none; fixed at create
 * @param egressProxy the SOCKS5 proxy its egress is tunneled through, or null
 *     for none; read back without its password
 * @since 0.1
 */
public record SandboxNetwork(List<String> allowOut, List<String> denyOut, Map<String, List<Rule>> rules,
    @Nullable Boolean allowInternetAccess, @Nullable Boolean allowPublicTraffic, @Nullable String maskRequestHost,
    @Nullable EgressProxy egressProxy) {

  /** Every IPv4 address, E2B's {@code ALL_TRAFFIC}: in {@code denyOut}, it denies all that is not allowed. */
  public static final String ALL_TRAFFIC = "0.0.0.0/0";

  private static final Pattern CIDR = Pattern.compile(
      "((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)(/(3[0-2]|[12]?\\d))?");
  private static final Pattern DOMAIN = Pattern.compile(
      "(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?");
  private static final Pattern HEADER = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

  /**
   * One transform of a host's requests: headers set on each (replacing a header of that name).
   *
   * @param headers header names and values; values never appear in {@link #toString()}
   */
  public record Rule(Map<String, String> headers) {
    /** Validates and copies the headers. */
    public Rule {
      Objects.requireNonNull(headers, "headers");
      headers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
      headers.forEach((name, value) -> {
        if (name == null || !HEADER.matcher(name).matches()) {
          throw new IllegalArgumentException("a rule's header name must be an HTTP token, got '" + name + "'");
        }
        if (value == null || value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
          throw new IllegalArgumentException("the value of header '" + name + "' must be one line of text");
        }
      });
    }

    /** Names the headers, never their values. */
    @Override
    public String toString() {
      return "Rule[headers=" + headers.keySet() + " (values hidden)]";
    }
  }

  /** Validates and copies the components. */
  public SandboxNetwork {
    allowOut = List.copyOf(Objects.requireNonNull(allowOut, "allowOut"));
    denyOut = List.copyOf(Objects.requireNonNull(denyOut, "denyOut"));
    for (String a : allowOut) {
      if (!CIDR.matcher(a).matches() && !DOMAIN.matcher(a).matches()) {
        throw new IllegalArgumentException("allowOut entries are a domain, *.domain, IP or CIDR, got '" + a + "'");
      }
    }
    for (String d : denyOut) {
      if (!CIDR.matcher(d).matches()) {
        throw new IllegalArgumentException("denyOut entries are an IP or CIDR, got '" + d + "'");
      }
    }
    Map<String, List<Rule>> copy = new LinkedHashMap<>();
    Objects.requireNonNull(rules, "rules").forEach((host, list) -> {
      if (host == null || (!CIDR.matcher(host).matches() && !DOMAIN.matcher(host).matches())) {
        throw new IllegalArgumentException("a rule's host is a domain, *.domain, IP or CIDR, got '" + host + "'");
      }
      copy.put(host, List.copyOf(Objects.requireNonNull(list, "rules of " + host)));
    });
    rules = java.util.Collections.unmodifiableMap(copy);
    if (maskRequestHost != null && (maskRequestHost.isBlank() || maskRequestHost.chars().anyMatch(c -> c <= ' ' || c == 0x7f))) {
      throw new IllegalArgumentException("maskRequestHost must be a host name without spaces or control characters, got '"
          + maskRequestHost + "'");
    }
  }

  /**
   * A network without an egress proxy.
   *
   * @param allowOut domains, IPs and CIDRs the sandbox may reach
   * @param denyOut IPs and CIDRs it may not
   * @param rules per host, the header transforms
   * @param allowInternetAccess whether egress is open; null for the server's default
   * @param allowPublicTraffic false to make requests to its ports carry its traffic token; or null
   * @param maskRequestHost the {@code Host} of requests to its ports; or null
   */
  public SandboxNetwork(List<String> allowOut, List<String> denyOut, Map<String, List<Rule>> rules,
      @Nullable Boolean allowInternetAccess, @Nullable Boolean allowPublicTraffic, @Nullable String maskRequestHost) {
    this(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost, null);
  }

  /**
   * Returns a network with nothing set: every component is the server's default.
   *
   * @return an empty network
   */
  public static SandboxNetwork defaults() {
    return new SandboxNetwork(List.of(), List.of(), Map.of(), null, null, null, null);
  }

  /**
   * Returns a network that reaches these destinations and nothing else: {@code allowOut} them and
   * {@code denyOut} {@link #ALL_TRAFFIC}.
   *
   * @param destinations domains ({@code *.} wildcards allowed), IPs or CIDRs; none for no egress
   * @return the network
   */
  public static SandboxNetwork allowOnly(String... destinations) {
    return defaults().withAllowOut(List.of(destinations)).withDenyOut(List.of(ALL_TRAFFIC));
  }

  /**
   * Returns a network that reaches nothing: {@code allowInternetAccess: false} and {@code denyOut}
   * {@link #ALL_TRAFFIC}.
   *
   * @return the network
   */
  public static SandboxNetwork denyAll() {
    return defaults().withAllowInternetAccess(false).withDenyOut(List.of(ALL_TRAFFIC));
  }

  /**
   * Returns a copy with this allow-list, replacing the one before.
   *
   * @param allowOut domains ({@code *.} wildcards allowed), IPs and CIDRs
   * @return the copy
   */
  public SandboxNetwork withAllowOut(List<String> allowOut) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost, egressProxy);
  }

  /**
   * Returns a copy with this deny-list, replacing the one before.
   *
   * @param denyOut IPs and CIDRs
   * @return the copy
   */
  public SandboxNetwork withDenyOut(List<String> denyOut) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost, egressProxy);
  }

  /**
   * Returns a copy that also sets these headers on requests to {@code host}, after the host's
   * rules so far (E2B's {@code rules}). The host must also be in {@link #allowOut()} to be reached.
   *
   * @param host a domain ({@code *.} wildcard allowed), IP or CIDR
   * @param headers the headers to set
   * @return the copy
   */
  public SandboxNetwork withRule(String host, Map<String, String> headers) {
    Map<String, List<Rule>> more = new LinkedHashMap<>(rules);
    List<Rule> list = new ArrayList<>(more.getOrDefault(host, List.of()));
    list.add(new Rule(headers));
    more.put(host, list);
    return new SandboxNetwork(allowOut, denyOut, more, allowInternetAccess, allowPublicTraffic, maskRequestHost, egressProxy);
  }

  /**
   * Returns a copy that says whether egress is open (less {@code denyOut}).
   *
   * @param allowInternetAccess true for open, false for only {@code allowOut}
   * @return the copy
   */
  public SandboxNetwork withAllowInternetAccess(boolean allowInternetAccess) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost, egressProxy);
  }

  /**
   * Returns a copy that says whether the sandbox's ports are public; only at create.
   *
   * @param allowPublicTraffic false to make requests to its ports carry its traffic token
   * @return the copy
   */
  public SandboxNetwork withAllowPublicTraffic(boolean allowPublicTraffic) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost, egressProxy);
  }

  /**
   * Returns a copy with this {@code Host} for requests to the sandbox's ports; only at create.
   *
   * @param maskRequestHost a host name, {@code ${PORT}} standing for the port
   * @return the copy
   */
  public SandboxNetwork withMaskRequestHost(String maskRequestHost) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic,
        Objects.requireNonNull(maskRequestHost, "maskRequestHost"), egressProxy);
  }

  /**
   * Returns a copy whose egress goes through this SOCKS5 proxy, as E2B's {@code egressProxy}, at
   * create or in an update. An update without it stops tunneling (E2B replaces the whole policy).
   *
   * @param egressProxy the proxy
   * @return the copy
   */
  public SandboxNetwork withEgressProxy(EgressProxy egressProxy) {
    return new SandboxNetwork(allowOut, denyOut, rules, allowInternetAccess, allowPublicTraffic, maskRequestHost,
        Objects.requireNonNull(egressProxy, "egressProxy"));
  }
}
