package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.common.Ipv4;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which addresses a sandbox may never reach, whatever its policy says, and which it may reach only
 * when its allow-list names them by IP or CIDR. One place, used alike by the egress gateway (for
 * the addresses a name resolves to) and by the firewalls (in the sandbox's namespace and on the
 * host).
 *
 * <ul>
 *   <li><b>Never</b>: loopback, "this network" (0.0.0.0/8), link-local, multicast, reserved and
 *       broadcast addresses; every address of this host (which covers every Docker bridge's
 *       gateway); the networks sandboxes and template builds sit on (every sandbox's address);
 *       IPv6 but for global unicast outside the ranges that embed an IPv4 address (unique local
 *       addresses, fc00::/7, among them: an allow-list names IPv4 only).
 *   <li><b>Private</b> (only when an allow-list IP or CIDR inside the private range names it):
 *       10/8, 172.16/12, 192.168/16, 100.64/10 (shared address space).
 * </ul>
 */
public final class Destinations {
  /** Never reachable from a sandbox, as CIDRs (IPv4). */
  static final List<String> NEVER_V4 = List.of("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4");
  /** Reachable only when an allow-list IP or CIDR within them names the address. */
  static final List<String> PRIVATE_V4 = List.of("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10");

  private static final long HOST_ADDRESSES_TTL_NANOS = 2_000_000_000L;

  private final List<String> sandboxSubnets;
  private volatile Set<InetAddress> hostAddresses = Set.of();
  private volatile long hostAddressesAt;

  /** @param sandboxSubnets the CIDRs of the networks sandboxes and builds sit on */
  public Destinations(List<String> sandboxSubnets) {
    this.sandboxSubnets = List.copyOf(sandboxSubnets);
  }

  /** @return the CIDRs of the networks sandboxes and builds sit on */
  public List<String> sandboxSubnets() {
    return sandboxSubnets;
  }

  /**
   * Why a sandbox may never reach {@code address}, or null when its policy decides.
   *
   * @param address a resolved address
   */
  public @Nullable String neverReason(InetAddress address) {
    InetAddress a = unmapped(address);
    if (a.isLoopbackAddress()) {
      return "a loopback address";
    }
    if (a.isAnyLocalAddress() || a.isLinkLocalAddress() || a.isMulticastAddress()) {
      return "not a unicast address on another host";
    }
    if (a instanceof Inet6Address v6) {
      return globalV6(v6) ? null : "an IPv6 address outside global unicast";
    }
    for (String cidr : NEVER_V4) {
      if (inCidr(a, cidr)) {
        return "a reserved address";
      }
    }
    for (String cidr : sandboxSubnets) {
      if (inCidr(a, cidr)) {
        return "an address on the sandboxes' network";
      }
    }
    if (hostAddresses().contains(a)) {
      return "an address of the host the sandboxes run on";
    }
    return null;
  }

  /** @return whether {@code address} is in a private range (reachable only when allowed by IP or CIDR) */
  public static boolean isPrivate(InetAddress address) {
    InetAddress a = unmapped(address);
    for (String cidr : PRIVATE_V4) {
      if (inCidr(a, cidr)) {
        return true;
      }
    }
    return false;
  }

  /** @return whether the CIDR (or IP) lies wholly inside one private range: naming it is an explicit allow of private addresses */
  public static boolean withinPrivate(String cidr) {
    InetAddress net = v4(network(cidr));
    if (net == null) {
      return false;
    }
    for (String range : PRIVATE_V4) {
      if (prefixOf(cidr) >= prefixOf(range) && inCidr(net, range)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code address} may be reached under {@code policy}, and if not, why.
   *
   * @param allowedByName whether the name that resolved to it is on the allow-list
   * @return null when allowed, else the reason
   */
  public @Nullable String refusal(InetAddress address, EgressPolicy policy, boolean allowedByName) {
    String never = neverReason(address);
    if (never != null) {
      return never;
    }
    InetAddress a = unmapped(address);
    if (isPrivate(a)) {
      for (String cidr : policy.allowedCidrs()) {
        if (withinPrivate(cidr) && inCidr(a, cidr)) {
          return null;
        }
      }
      return "a private address no allow-list IP or CIDR names";
    }
    if (allowedByName || policy.allowsAddress(a)) {
      return null;
    }
    return "not allowed by the sandbox's network policy";
  }

  /**
   * Whether the gateway may connect to a sandbox's own {@code egressProxy} at {@code address}, and
   * if not, why: only where the sandbox could go itself with internet access, so never anything
   * no policy opens, and a private address only when its allow-list names it by IP or CIDR. The
   * proxy can then reach nothing of this host the sandbox could not.
   *
   * @return null when it may, else the reason
   */
  public @Nullable String proxyRefusal(InetAddress address, EgressPolicy policy) {
    return refusal(address, new EgressPolicy(policy.allowOut(), List.of(), true), false);
  }

  /** Every address of this host, refreshed every two seconds. */
  public Set<InetAddress> hostAddresses() {
    long now = System.nanoTime();
    if (now - hostAddressesAt > HOST_ADDRESSES_TTL_NANOS || hostAddresses.isEmpty()) {
      Set<InetAddress> found = new HashSet<>();
      try {
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
          found.addAll(Collections.list(nif.getInetAddresses()).stream().map(Destinations::withoutScope).toList());
        }
      } catch (SocketException e) {
        // keep what was known; the host firewall refuses the host's addresses whatever this finds
        found.addAll(hostAddresses);
      }
      hostAddresses = Set.copyOf(found);
      hostAddressesAt = now;
    }
    return hostAddresses;
  }

  /** The host's IPv4 addresses, as the firewall in a sandbox's namespace names them. */
  public List<String> hostAddressesV4() {
    List<String> v4 = new ArrayList<>();
    for (InetAddress a : hostAddresses()) {
      if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
        v4.add(a.getHostAddress());
      }
    }
    Collections.sort(v4);
    return v4;
  }

  private static InetAddress withoutScope(InetAddress a) {
    if (a instanceof Inet6Address) {
      try {
        return InetAddress.getByAddress(a.getAddress());
      } catch (UnknownHostException e) {
        return a;
      }
    }
    return a;
  }

  /** An IPv4-mapped or IPv4-compatible IPv6 address as the IPv4 address it carries. */
  static InetAddress unmapped(InetAddress a) {
    if (a instanceof Inet6Address) {
      byte[] b = a.getAddress();
      boolean zeros = true;
      for (int i = 0; i < 10; i++) {
        zeros &= b[i] == 0;
      }
      boolean mapped = zeros && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
      boolean compatible = zeros && b[10] == 0 && b[11] == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0);
      if (mapped || compatible) {
        try {
          return InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
        } catch (UnknownHostException e) {
          return a;
        }
      }
      return withoutScope(a);
    }
    return a;
  }

  /** Global unicast (2000::/3), but not 6to4 (2002::/16), Teredo (2001::/32) or documentation space. */
  private static boolean globalV6(Inet6Address a) {
    byte[] b = a.getAddress();
    if ((b[0] & 0xe0) != 0x20) {
      return false;
    }
    int first = ((b[0] & 0xff) << 8) | (b[1] & 0xff);
    int second = ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    return first != 0x2002 && !(first == 0x2001 && (second == 0 || second == 0x0db8));
  }

  /** Whether an IPv4 address is in an IPv4 CIDR (a bare IP is a /32); false for anything else. */
  static boolean inCidr(InetAddress address, String cidr) {
    byte[] b = unmapped(address).getAddress();
    if (b.length != 4) {
      return false;
    }
    long addr = toLong(b);
    long net = Ipv4.parse(network(cidr));
    int bits = prefixOf(cidr);
    if (net < 0 || bits < 0 || bits > 32) {
      return false;
    }
    long mask = bits == 0 ? 0 : (0xFFFFFFFFL << (32 - bits)) & 0xFFFFFFFFL;
    return (net & mask) == (addr & mask);
  }

  /** The address of a dotted-decimal IPv4 text, never looked up; null when it is not one. */
  static @Nullable InetAddress v4(String ip) {
    long v = Ipv4.parse(ip);
    if (v < 0) {
      return null;
    }
    try {
      return InetAddress.getByAddress(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static String network(String cidr) {
    int slash = cidr.indexOf('/');
    return slash < 0 ? cidr : cidr.substring(0, slash);
  }

  private static int prefixOf(String cidr) {
    int slash = cidr.indexOf('/');
    try {
      return slash < 0 ? 32 : Integer.parseInt(cidr.substring(slash + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static long toLong(byte[] b) {
    if (b.length != 4) {
      return -1;
    }
    return ((b[0] & 0xFFL) << 24) | ((b[1] & 0xFFL) << 16) | ((b[2] & 0xFFL) << 8) | (b[3] & 0xFFL);
  }
}
