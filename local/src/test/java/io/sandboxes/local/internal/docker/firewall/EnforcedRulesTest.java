package io.sandboxes.local.internal.docker.firewall;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.local.internal.egress.Destinations;
import io.sandboxes.local.internal.egress.EgressPolicy;
import io.sandboxes.local.internal.egress.PolicyRules;
import io.sandboxes.local.internal.runtime.EgressRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The firewall text Docker's enforcement writes is, byte for byte, what egress wrote before the
 * enforcement moved behind the runtime seam: the namespace's whole table and the host's batch for
 * a sandbox, and the shared chain of template builds, for a spread of policies. The generator as
 * it was is kept below, frozen, as the reference.
 */
class EnforcedRulesTest {
  private static final String GATEWAY = "172.30.0.1";
  private static final List<String> SUBNETS = List.of("172.30.0.0/16", "172.31.0.0/16");
  private static final List<EgressPolicy> POLICIES = List.of(
      EgressPolicy.DENY_ALL,
      new EgressPolicy(List.of(), List.of(), true),
      new EgressPolicy(List.of(), List.of("8.8.8.8", "1.1.1.0/24"), true),
      new EgressPolicy(List.of(), List.of("0.0.0.0/0"), true),
      new EgressPolicy(List.of("example.com", "*.github.com"), List.of(), false),
      new EgressPolicy(List.of("example.com", "10.1.2.3", "192.168.5.0/24", "93.184.216.34", "1.2.3.0/24", "100.64.1.1"), List.of(),
          false),
      new EgressPolicy(List.of("10.1.2.3", "93.184.216.34"), List.of("0.0.0.0/0", "9.9.9.9"), true),
      new EgressPolicy(List.of("172.16.0.0/12"), List.of(), false));

  @Test
  @DisplayName("a sandbox's namespace table and host batch are what egress wrote before the move, for every policy, mode and host")
  void sameTextAsBefore() {
    int compared = 0;
    for (EgressPolicy policy : POLICIES) {
      for (boolean open : new boolean[] {false, true}) {
        for (List<Integer> ports : List.of(List.of(3128), List.of(3128, 40001))) {
          for (List<String> host : List.of(List.<String>of(), List.of("10.0.0.5", "172.17.0.1", "192.168.1.10"))) {
            EgressRules rules = PolicyRules.enforced(policy, open, GATEWAY, ports, SUBNETS);
            String now = DockerEgressEnforcement.table(rules, open ? List.of() : host);
            assertThat(now).as("namespace, %s open=%s ports=%s host=%s", policy, open, ports, host)
                .isEqualTo(Before.namespace(policy, open, ports, host));
            compared++;
          }
          for (boolean dispatched : new boolean[] {false, true}) {
            String now = HostFirewall.sandboxBatch("172.30.0.7", "veth1a2b3c", PolicyRules.enforced(policy, open, GATEWAY, ports, SUBNETS)
                .rules(), dispatched);
            assertThat(now).as("host, %s open=%s ports=%s dispatched=%s", policy, open, ports, dispatched)
                .isEqualTo(Before.sandboxBatch("172.30.0.7", "veth1a2b3c", Before.rules(policy, open, ports,
                    List.of("-m addrtype --dst-type LOCAL")), dispatched));
            compared++;
          }
        }
      }
    }
    assertThat(compared).isEqualTo(POLICIES.size() * 2 * 2 * 4);
  }

  @Test
  @DisplayName("the template builds' shared chain holds what it held before the move")
  void buildsChainAsBefore() {
    EgressPolicy builds = new EgressPolicy(List.of(), List.of(), true);
    String now = IptablesRules.onHost(PolicyRules.enforced(builds, false, GATEWAY, List.of(), SUBNETS).rules(), "SANDBOXES-BUILDS",
        "RETURN", "DROP");
    assertThat(now).isEqualTo(Before.render(Before.rules(builds, false, List.of(), List.of("-m addrtype --dst-type LOCAL")),
        "SANDBOXES-BUILDS", "RETURN", "DROP"));
    assertThat(now).startsWith("-A SANDBOXES-BUILDS -m addrtype --dst-type LOCAL -j DROP\n")
        .endsWith("-A SANDBOXES-BUILDS -j RETURN\n-A SANDBOXES-BUILDS -j DROP\n");
  }

  @Test
  @DisplayName("deny-all inside a namespace: loopback, Docker's resolver refused, the host's addresses and everything else refused")
  void denyAllLiteral() {
    String now = DockerEgressEnforcement.table(PolicyRules.enforced(EgressPolicy.DENY_ALL, false, GATEWAY, List.of(3128), SUBNETS),
        List.of("10.0.0.5"));
    String refuse = " -j REJECT --reject-with icmp-admin-prohibited\n";
    assertThat(now).isEqualTo("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n-A INPUT -i lo -j ACCEPT\n"
        + "-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n-A OUTPUT -o lo -d 127.0.0.11 -j REJECT\n"
        + "-A OUTPUT -o lo -j ACCEPT\n-A OUTPUT -d 10.0.0.5/32" + refuse + "-A OUTPUT -d 172.30.0.0/16" + refuse
        + "-A OUTPUT -d 172.31.0.0/16" + refuse + "-A OUTPUT -d 0.0.0.0/8" + refuse + "-A OUTPUT -d 127.0.0.0/8" + refuse
        + "-A OUTPUT -d 169.254.0.0/16" + refuse + "-A OUTPUT -d 224.0.0.0/4" + refuse + "-A OUTPUT -d 240.0.0.0/4" + refuse
        + "-A OUTPUT -d 10.0.0.0/8" + refuse + "-A OUTPUT -d 172.16.0.0/12" + refuse + "-A OUTPUT -d 192.168.0.0/16" + refuse
        + "-A OUTPUT -d 100.64.0.0/10" + refuse + "-A OUTPUT" + refuse + "COMMIT\n");
  }

  /** The generator as egress had it before the enforcement moved into the docker package (frozen). */
  private static final class Before {
    private static final List<String> NEVER_V4 = List.of("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4");
    private static final List<String> PRIVATE_V4 = List.of("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10");

    record Rule(String match, boolean allow) {}

    static List<Rule> rules(EgressPolicy policy, boolean open, List<Integer> gatewayPorts, List<String> hostAddresses) {
      List<Rule> rules = new ArrayList<>();
      if (open) {
        rules.add(new Rule("", true));
        return rules;
      }
      if (policy.allowsAnything()) {
        for (int port : gatewayPorts) {
          rules.add(new Rule("-d " + GATEWAY + "/32 -p tcp --dport " + port, true));
        }
      }
      for (String host : hostAddresses) {
        rules.add(new Rule(host, false));
      }
      for (String cidr : SUBNETS) {
        rules.add(new Rule("-d " + cidr, false));
      }
      for (String cidr : NEVER_V4) {
        rules.add(new Rule("-d " + cidr, false));
      }
      List<String> allowed = policy.allowedCidrs();
      for (String cidr : allowed) {
        if (Destinations.withinPrivate(cidr)) {
          rules.add(new Rule("-d " + cidr, true));
        }
      }
      for (String cidr : PRIVATE_V4) {
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

    static String namespace(EgressPolicy policy, boolean open, List<Integer> ports, List<String> hostAddressesV4) {
      StringBuilder r = new StringBuilder("*filter\n");
      if (open) {
        r.append(":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n");
        return r.toString();
      }
      r.append(":INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n");
      r.append("-A INPUT -i lo -j ACCEPT\n");
      r.append("-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n");
      if (!policy.internetAccess()) {
        r.append("-A OUTPUT -o lo -d 127.0.0.11 -j REJECT\n");
      }
      r.append("-A OUTPUT -o lo -j ACCEPT\n");
      List<String> host = hostAddressesV4.stream().map(a -> "-d " + a + "/32").toList();
      r.append(render(rules(policy, false, ports, host), "OUTPUT", "ACCEPT", "REJECT --reject-with icmp-admin-prohibited"));
      r.append("COMMIT\n");
      return r.toString();
    }

    static String sandboxBatch(String ip, String veth, List<Rule> rules, boolean dispatched) {
      String chain = chainOf(ip);
      StringBuilder batch = new StringBuilder("*filter\n:").append(chain).append(" - [0:0]\n");
      batch.append(render(rules, chain, "RETURN", "DROP"));
      if (!dispatched) {
        for (String dispatch : List.of("SANDBOXES-IN", "SANDBOXES-FWD")) {
          batch.append("-I ").append(dispatch).append(" 1").append(entry(dispatch, ip, veth, chain).substring(("-A " + dispatch).length()))
              .append('\n');
        }
      }
      return batch.append("COMMIT\n").toString();
    }

    private static String chainOf(String ip) {
      long v = 0;
      for (String part : ip.split("\\.")) {
        v = (v << 8) | Integer.parseInt(part);
      }
      return "SBX-" + String.format(Locale.ROOT, "%08X", v);
    }

    private static String entry(String dispatch, String ip, String veth, String chain) {
      return "-A " + dispatch + " -s " + ip + "/32 -m physdev --physdev-in " + veth + " -g " + chain;
    }
  }
}
