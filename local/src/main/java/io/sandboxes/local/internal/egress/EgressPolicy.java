package io.sandboxes.local.internal.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * E2B's network policy for one sandbox: {@code allowOut} (domains, {@code *.} wildcards, IPs,
 * CIDRs), {@code denyOut} (IPs, CIDRs), and {@code allow_internet_access}. Allow beats deny; with
 * no allow-list and no internet access nothing is reachable.
 */
public record EgressPolicy(List<String> allowOut, List<String> denyOut, boolean internetAccess) {

  private static final Pattern IPV4 = Pattern.compile("^\\d{1,3}(\\.\\d{1,3}){3}(/\\d{1,2})?$");

  public static final EgressPolicy DENY_ALL = new EgressPolicy(List.of(), List.of(), false);

  public EgressPolicy {
    allowOut = List.copyOf(allowOut);
    denyOut = List.copyOf(denyOut);
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

  /** Whether a connection to {@code host} (a name or an IPv4 address) may be made. */
  public boolean allows(String host) {
    String h = host.toLowerCase(Locale.ROOT);
    if (isIpOrCidr(h)) {
      for (String a : allowOut) {
        if (isIpOrCidr(a) && inCidr(h, a)) {
          return true;
        }
      }
      for (String d : denyOut) {
        if (inCidr(h, d)) {
          return false;
        }
      }
      return internetAccess;
    }
    for (String a : allowOut) {
      String rule = a.toLowerCase(Locale.ROOT);
      if (rule.startsWith("*.") ? h.endsWith(rule.substring(1)) : h.equals(rule)) {
        return true;
      }
    }
    return internetAccess;
  }

  static boolean inCidr(String ip, String cidr) {
    try {
      String[] parts = cidr.split("/");
      int bits = parts.length > 1 ? Integer.parseInt(parts[1]) : 32;
      long net = toLong(InetAddress.getByName(parts[0]).getAddress());
      long addr = toLong(InetAddress.getByName(ip).getAddress());
      long mask = bits == 0 ? 0 : (0xFFFFFFFFL << (32 - bits)) & 0xFFFFFFFFL;
      return (net & mask) == (addr & mask);
    } catch (UnknownHostException | NumberFormatException e) {
      return false;
    }
  }

  private static long toLong(byte[] b) {
    if (b.length != 4) {
      return -1;
    }
    return ((b[0] & 0xFFL) << 24) | ((b[1] & 0xFFL) << 16) | ((b[2] & 0xFFL) << 8) | (b[3] & 0xFFL);
  }

}
