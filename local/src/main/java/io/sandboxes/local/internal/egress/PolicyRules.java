package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.runtime.EgressRules;
import java.util.ArrayList;
import java.util.List;

/**
 * One sandbox's policy as the ordered rules a runtime enforces ({@link EgressRules}), for packets
 * the sandbox sends to addresses other than its own loopback. In order:
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
 *
 * <p>With an {@code egressProxy}, the allow-list's IPs and CIDRs and internet access open nothing
 * directly: everything leaves through the gateway, which tunnels it through the proxy, so the
 * sandbox cannot route around it.
 */
public final class PolicyRules {
  private PolicyRules() {}

  /**
   * @param open every destination allowed (open mode)
   * @param gateway the egress gateway's address
   * @param gatewayPorts the ports it listens on
   * @param sandboxSubnets the CIDRs of the networks sandboxes and builds sit on
   */
  public static List<EgressRules.Rule> of(EgressPolicy policy, boolean open, String gateway, List<Integer> gatewayPorts,
      List<String> sandboxSubnets) {
    List<EgressRules.Rule> rules = new ArrayList<>();
    if (open) {
      rules.add(new EgressRules.Rule(new EgressRules.Anything(), true));
      return rules;
    }
    if (policy.allowsAnything()) {
      for (int port : gatewayPorts) {
        rules.add(new EgressRules.Rule(new EgressRules.GatewayPort(gateway, port), true));
      }
    }
    rules.add(new EgressRules.Rule(new EgressRules.HostItself(), false));
    for (String cidr : sandboxSubnets) {
      rules.add(range(cidr, false));
    }
    for (String cidr : Destinations.NEVER_V4) {
      rules.add(range(cidr, false));
    }
    boolean direct = policy.proxy() == null;
    List<String> allowed = direct ? policy.allowedCidrs() : List.of();
    for (String cidr : allowed) {
      if (Destinations.withinPrivate(cidr)) {
        rules.add(range(cidr, true));
      }
    }
    for (String cidr : Destinations.PRIVATE_V4) {
      rules.add(range(cidr, false));
    }
    for (String cidr : allowed) {
      if (!Destinations.withinPrivate(cidr)) {
        rules.add(range(cidr, true));
      }
    }
    if (policy.internetAccess() && direct) {
      for (String deny : policy.denyOut()) {
        rules.add(range(deny, false));
      }
      rules.add(new EgressRules.Rule(new EgressRules.Anything(), true));
    }
    rules.add(new EgressRules.Rule(new EgressRules.Anything(), false));
    return rules;
  }

  /**
   * The policy whole, as a runtime enforces it.
   *
   * @param open every destination allowed, with no firewall inside the sandbox (open mode)
   */
  public static EgressRules enforced(EgressPolicy policy, boolean open, String gateway, List<Integer> gatewayPorts,
      List<String> sandboxSubnets) {
    return new EgressRules(open, policy.internetAccess(), of(policy, open, gateway, gatewayPorts, sandboxSubnets));
  }

  private static EgressRules.Rule range(String cidr, boolean allow) {
    return new EgressRules.Rule(new EgressRules.Range(cidr), allow);
  }
}
