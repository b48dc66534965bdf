package io.sandboxes.local.internal.egress;

import java.util.ArrayList;
import java.util.List;

/**
 * One sandbox's policy as an ordered list of iptables matches, each with a verdict, for packets
 * the sandbox sends to addresses other than its own loopback. The same list is written twice:
 * into the sandbox's own network namespace (OUTPUT, defence in depth) and into the host's chains
 * keyed by the sandbox's address and bridge port (INPUT and FORWARD), which the sandbox cannot
 * reach. In order:
 *
 * <ol>
 *   <li>the egress gateway's ports, when the policy allows anything (names go through it);
 *   <li>in open mode (tests of verification only), everything;
 *   <li>what no policy opens ({@link Destinations}): the host's own addresses, the sandboxes'
 *       networks, loopback, link-local, multicast and reserved ranges;
 *   <li>allow-list IPs and CIDRs inside a private range, then the private ranges refused;
 *   <li>the other allow-list IPs and CIDRs;
 *   <li>with internet access, {@code denyOut} refused and the rest allowed;
 *   <li>anything else refused.
 * </ol>
 */
final class PolicyRules {
  private PolicyRules() {}

  /** One match (iptables arguments, without the chain) and whether it lets the packet go. */
  record Rule(String match, boolean allow) {}

  /**
   * @param gateway the egress gateway's address
   * @param gatewayPorts the ports it listens on
   * @param hostAddresses how the host's own addresses are matched: "-m addrtype --dst-type LOCAL"
   *     on the host, the addresses themselves inside a namespace (where LOCAL means the sandbox's)
   */
  static List<Rule> of(EgressPolicy policy, boolean open, String gateway, List<Integer> gatewayPorts, List<String> hostAddresses,
      List<String> sandboxSubnets) {
    List<Rule> rules = new ArrayList<>();
    if (open) {
      rules.add(new Rule("", true));
      return rules;
    }
    if (policy.allowsAnything()) {
      for (int port : gatewayPorts) {
        rules.add(new Rule("-d " + gateway + "/32 -p tcp --dport " + port, true));
      }
    }
    for (String host : hostAddresses) {
      rules.add(new Rule(host, false));
    }
    for (String cidr : sandboxSubnets) {
      rules.add(new Rule("-d " + cidr, false));
    }
    for (String cidr : Destinations.NEVER_V4) {
      rules.add(new Rule("-d " + cidr, false));
    }
    List<String> allowed = policy.allowedCidrs();
    for (String cidr : allowed) {
      if (Destinations.withinPrivate(cidr)) {
        rules.add(new Rule("-d " + cidr, true));
      }
    }
    for (String cidr : Destinations.PRIVATE_V4) {
      rules.add(new Rule("-d " + cidr, false));
    }
    for (String cidr : allowed) {
      if (!Destinations.withinPrivate(cidr)) {
        rules.add(new Rule("-d " + cidr, true));
      }
    }
    if (policy.internetAccess()) {
      for (String deny : policy.denyOut()) {
        rules.add(new Rule("-d " + deny, false));
      }
      rules.add(new Rule("", true));
    }
    rules.add(new Rule("", false));
    return rules;
  }

  /** The rules as {@code iptables-restore} lines appended to {@code chain}. */
  static String render(List<Rule> rules, String chain, String allow, String deny) {
    StringBuilder out = new StringBuilder();
    for (Rule r : rules) {
      out.append("-A ").append(chain);
      if (!r.match().isEmpty()) {
        out.append(' ').append(r.match());
      }
      out.append(" -j ").append(r.allow() ? allow : deny).append('\n');
    }
    return out.toString();
  }
}
