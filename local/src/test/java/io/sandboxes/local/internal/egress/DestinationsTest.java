package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.common.Ipv4;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What no policy opens, and how the gateway picks addresses, without Docker. */
class DestinationsTest {
  private static final Destinations D = new Destinations(List.of("172.18.0.0/16"));
  private static final EgressPolicy INTERNET = new EgressPolicy(List.of(), List.of(), true);

  private static InetAddress a(String literal) throws Exception {
    return InetAddress.getByName(literal);
  }

  @Test
  @DisplayName("loopback, unspecified, link-local, multicast, reserved, the sandboxes' network and every address of this host are never reachable, in any spelling")
  void never() throws Exception {
    for (String never : List.of("127.0.0.1", "127.255.0.9", "0.0.0.0", "0.1.2.3", "169.254.169.254", "224.0.0.1", "255.255.255.255",
        "240.1.1.1", "172.18.0.5", "172.18.0.1", "::1", "::", "::ffff:127.0.0.1", "::ffff:172.18.0.1", "fe80::1", "ff02::1",
        "2002:7f00:1::1", "2001:db8::1", "fd00::1")) {
      assertThat(D.refusal(a(never), INTERNET, true)).as(never).isNotNull();
      assertThat(D.refusal(a(never), new EgressPolicy(List.of(never.contains(":") ? "0.0.0.0/0" : never + "/32"), List.of(), true), true))
          .as(never + " named outright").isNotNull();
    }
    for (InetAddress own : D.hostAddresses()) {
      assertThat(D.refusal(own, new EgressPolicy(List.of("0.0.0.0/0"), List.of(), true), true)).as(own.toString()).isNotNull();
    }
  }

  @Test
  @DisplayName("private ranges only when an allow-list IP or CIDR inside them names the address; a wider CIDR (0.0.0.0/0) or a name opens none")
  void privateRanges() throws Exception {
    for (String priv : List.of("10.1.2.3", "172.16.0.1", "172.31.255.1", "192.168.1.1", "100.64.0.1")) {
      assertThat(D.refusal(a(priv), INTERNET, true)).as(priv).contains("private");
      assertThat(D.refusal(a(priv), new EgressPolicy(List.of("0.0.0.0/0"), List.of(), true), false)).as(priv).isNotNull();
    }
    assertThat(D.refusal(a("10.1.2.3"), new EgressPolicy(List.of("10.1.0.0/16"), List.of(), false), false)).isNull();
    assertThat(D.refusal(a("10.2.2.3"), new EgressPolicy(List.of("10.1.0.0/16"), List.of(), false), false)).isNotNull();
    assertThat(D.refusal(a("192.168.7.7"), new EgressPolicy(List.of("192.168.7.7"), List.of(), false), false)).isNull();
    assertThat(Destinations.withinPrivate("0.0.0.0/0")).isFalse();
    assertThat(Destinations.withinPrivate("10.0.0.0/7")).isFalse();
    assertThat(Destinations.withinPrivate("10.0.0.0/8")).isTrue();
  }

  @Test
  @DisplayName("public addresses: by the allow-list's name or CIDR, or with internet access minus denyOut, which applies to the resolved address")
  void publicAddresses() throws Exception {
    InetAddress pub = a("198.18.4.2");
    assertThat(D.refusal(pub, EgressPolicy.DENY_ALL, false)).isNotNull();
    assertThat(D.refusal(pub, new EgressPolicy(List.of("pypi.org"), List.of(), false), true)).isNull();
    assertThat(D.refusal(pub, new EgressPolicy(List.of("pypi.org"), List.of(), false), false)).isNotNull();
    assertThat(D.refusal(pub, new EgressPolicy(List.of("198.18.0.0/15"), List.of(), false), false)).isNull();
    assertThat(D.refusal(pub, INTERNET, false)).isNull();
    assertThat(D.refusal(pub, new EgressPolicy(List.of(), List.of("198.18.4.0/24"), true), false)).isNotNull();
    assertThat(D.refusal(pub, new EgressPolicy(List.of("198.18.4.2/32"), List.of("0.0.0.0/0"), true), false)).as("allow beats deny").isNull();
  }

  @Test
  @DisplayName("IPv4 text is parsed here, never looked up: odd spellings are not addresses")
  void parsing() {
    assertThat(Ipv4.parse("1.2.3.4")).isEqualTo(0x01020304L);
    for (String odd : List.of("127.1", "0x7f.0.0.1", "2130706433", "1.2.3.256", "1.2.3.4.5", "1..2.3", "", "01234.1.1.1")) {
      assertThat(Ipv4.parse(odd)).as(odd).isEqualTo(-1);
    }
  }

  @Test
  @DisplayName("the gateway resolves a name once and hands out resolved addresses only; a name the policy does not allow is not looked up, loopback names are refused")
  void gatewayTargets() throws Exception {
    try (EgressGateway gateway = new EgressGateway(InetAddress.getLoopbackAddress(),
        Map.of("allowed.witness.sandboxes.test", new InetSocketAddress(InetAddress.getLoopbackAddress(), 9)), D)) {
      assertThat(gateway.targets(INTERNET, "localhost", 80, "t")).isEmpty();
      assertThat(gateway.targets(INTERNET, "127.1", 80, "t")).isEmpty();
      assertThat(gateway.targets(INTERNET, "::ffff:127.0.0.1", 80, "t")).isEmpty();
      assertThat(gateway.targets(new EgressPolicy(List.of("localhost"), List.of(), false), "localhost", 80, "t")).isEmpty();
      assertThat(gateway.targets(new EgressPolicy(List.of("pypi.org"), List.of(), false), "never-looked-up.invalid", 80, "t")).isEmpty();
      List<InetSocketAddress> literal = gateway.targets(INTERNET, "198.18.4.2", 443, "t");
      assertThat(literal).containsExactly(new InetSocketAddress(a("198.18.4.2"), 443));
      assertThat(literal).allMatch(t -> !t.isUnresolved());
      assertThat(gateway.targets(new EgressPolicy(List.of("*.witness.sandboxes.test"), List.of(), false),
          "allowed.witness.sandboxes.test", 80, "t")).hasSize(1);
      assertThat(gateway.targets(EgressPolicy.DENY_ALL, "allowed.witness.sandboxes.test", 80, "t")).isEmpty();
    }
  }
}
