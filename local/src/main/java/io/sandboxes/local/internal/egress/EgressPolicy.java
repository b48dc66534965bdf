package io.sandboxes.local.internal.egress;

import java.net.InetAddress;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * E2B's network policy for one sandbox: {@code allowOut} (domains, {@code *.} wildcards, IPs,
 * CIDRs), {@code denyOut} (IPs, CIDRs), and {@code allow_internet_access}. Allow beats deny; with
 * no allow-list and no internet access nothing is reachable. What no policy can open (the host,
 * loopback, other sandboxes, and private ranges not named by IP or CIDR) is {@link Destinations}'.
 * Its {@link HeaderRules} say which allowed destinations the gateway intercepts to set headers;
 * they allow nothing themselves. With an {@code egressProxy}, what the policy allows leaves through
 * that proxy, and only through the gateway (nothing is allowed directly).
 *
 * @param proxy the sandbox's own {@code egressProxy}, or null to go out directly (or through the
 *     server-wide upstream proxy)
 */
public record EgressPolicy(List<String> allowOut, List<String> denyOut, boolean internetAccess, HeaderRules rules,
    @Nullable UpstreamProxy proxy) {

  private static final Pattern IPV4 = Pattern.compile("^\\d{1,3}(\\.\\d{1,3}){3}(/\\d{1,2})?$");

  public static final EgressPolicy DENY_ALL = new EgressPolicy(List.of(), List.of(), false);

  public EgressPolicy {
    allowOut = List.copyOf(allowOut);
    denyOut = List.copyOf(denyOut);
  }

  /** A policy without header rules, whose connections go out directly (or through the server-wide upstream proxy). */
  public EgressPolicy(List<String> allowOut, List<String> denyOut, boolean internetAccess) {
    this(allowOut, denyOut, internetAccess, HeaderRules.NONE, null);
  }

  /** @return whether anything at all may leave the sandbox */
  public boolean allowsAnything() {
    return internetAccess || !allowOut.isEmpty();
  }

  public static boolean isIpOrCidr(String s) {
    return IPV4.matcher(s).matches();
  }

  /** The IPs and CIDRs of the allow-list, which may be reached directly, not only through the gateway. */
  public List<String> allowedCidrs() {
    return allowOut.stream().filter(EgressPolicy::isIpOrCidr).toList();
  }

  /** @return whether a name is on the allow-list (exactly, or under a {@code *.} wildcard); never true for an IP */
  public boolean allowsName(String host) {
    String h = host.toLowerCase(Locale.ROOT);
    if (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    if (isIpOrCidr(h)) {
      return false;
    }
    for (String a : allowOut) {
      String rule = a.toLowerCase(Locale.ROOT);
      if (!isIpOrCidr(rule) && (rule.startsWith("*.") ? h.endsWith(rule.substring(1)) : h.equals(rule))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the policy lets a name be looked up at all: it is on the allow-list, or internet
   * access is on. Nothing else is resolved, so a sandbox cannot make the gateway look up names
   * it may not reach (a way to leak data through DNS).
   */
  public boolean mayResolve(String host) {
    return internetAccess || allowsName(host);
  }

  /** Whether the policy allows an address (an allow-list IP or CIDR, else internet access minus {@code denyOut}). */
  public boolean allowsAddress(InetAddress address) {
    for (String a : allowedCidrs()) {
      if (Destinations.inCidr(address, a)) {
        return true;
      }
    }
    if (!internetAccess) {
      return false;
    }
    for (String d : denyOut) {
      if (Destinations.inCidr(address, d)) {
        return false;
      }
    }
    return true;
  }
}
