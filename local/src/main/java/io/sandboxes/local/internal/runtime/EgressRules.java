package io.sandboxes.local.internal.runtime;

import java.util.List;

/**
 * One sandbox's egress policy as a runtime enforces it: an ordered list of destinations, each with
 * a verdict, for packets the sandbox sends to addresses other than its own loopback. The first
 * rule that matches decides; egress makes the list (it always ends in a rule for anything), the
 * runtime only writes it in its own terms.
 *
 * @param open every destination allowed, with no firewall at all inside the instance (open mode,
 *     for testing verification only); {@link #rules} then allows anything
 * @param resolverAllowed whether the instance may ask the runtime's own name resolver; when not,
 *     names go through the egress gateway alone and no query for any name leaves otherwise
 * @param rules the destinations in order, each allowed or refused
 */
public record EgressRules(boolean open, boolean resolverAllowed, List<Rule> rules) {

  /** Copies the rules. */
  public EgressRules {
    rules = List.copyOf(rules);
  }

  /**
   * One destination and whether a packet to it may go.
   *
   * @param to the destination
   * @param allow whether it may go
   */
  public record Rule(Destination to, boolean allow) {}

  /** A destination a rule matches. */
  public sealed interface Destination permits Anything, GatewayPort, HostItself, Range {}

  /** Every destination. */
  public record Anything() implements Destination {}

  /**
   * One TCP port of the egress gateway.
   *
   * @param address the gateway's IPv4 address
   * @param port the port
   */
  public record GatewayPort(String address, int port) implements Destination {}

  /**
   * Every address of the host the sandboxes run on: matched by the host where it can tell its own
   * addresses, and by the addresses egress knows ({@link EgressEnforcement#applyInside}) where not.
   */
  public record HostItself() implements Destination {}

  /**
   * An IPv4 address or CIDR range.
   *
   * @param cidr as the policy names it ({@code 10.0.0.0/8}, {@code 1.2.3.4})
   */
  public record Range(String cidr) implements Destination {}
}
