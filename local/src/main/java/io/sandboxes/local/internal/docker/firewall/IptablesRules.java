package io.sandboxes.local.internal.docker.firewall;

import io.sandboxes.local.internal.runtime.EgressRules;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's {@link EgressRules} as {@code iptables-restore} lines: one line per destination
 * (the host's own addresses, inside a namespace, one line per address), in the rules' order, each
 * ending in the chain's verdict for an allowed or a refused packet. The same rules are written
 * twice: into the sandbox's own network namespace (OUTPUT, defence in depth) and into the host's
 * chains keyed by the sandbox's address and bridge port (INPUT and FORWARD), which the sandbox
 * cannot reach.
 */
final class IptablesRules {
  /** How the host's chains match the host's own addresses: by type, every address it has. */
  static final String HOST_BY_TYPE = "-m addrtype --dst-type LOCAL";

  private IptablesRules() {}

  /** The rules as lines appended to the host's {@code chain}, the host's addresses matched by type. */
  static String onHost(List<EgressRules.Rule> rules, String chain, String allow, String deny) {
    return render(rules, null, chain, allow, deny);
  }

  /**
   * The rules as lines appended to {@code chain} in a sandbox's namespace, where "local" means the
   * sandbox's own addresses: the host's are named one by one.
   */
  static String inside(List<EgressRules.Rule> rules, List<String> hostAddresses, String chain, String allow, String deny) {
    return render(rules, hostAddresses, chain, allow, deny);
  }

  private static String render(List<EgressRules.Rule> rules, @Nullable List<String> hostAddresses, String chain, String allow,
      String deny) {
    StringBuilder out = new StringBuilder();
    for (EgressRules.Rule r : rules) {
      for (String match : matches(r.to(), hostAddresses)) {
        out.append("-A ").append(chain);
        if (!match.isEmpty()) {
          out.append(' ').append(match);
        }
        out.append(" -j ").append(r.allow() ? allow : deny).append('\n');
      }
    }
    return out.toString();
  }

  /** The iptables matches (without the chain) for one destination. */
  private static List<String> matches(EgressRules.Destination to, @Nullable List<String> hostAddresses) {
    return switch (to) {
      case EgressRules.Anything a -> List.of("");
      case EgressRules.GatewayPort g -> List.of("-d " + g.address() + "/32 -p tcp --dport " + g.port());
      case EgressRules.HostItself h -> hostAddresses == null ? List.of(HOST_BY_TYPE)
          : hostAddresses.stream().map(a -> "-d " + a + "/32").toList();
      case EgressRules.Range r -> List.of("-d " + r.cidr());
    };
  }
}
