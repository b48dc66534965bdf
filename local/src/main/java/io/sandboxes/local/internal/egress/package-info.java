/**
 * Egress policy, whatever the runtime: the sandboxes' network, the gateway every outbound
 * connection of a sandbox goes through, and the rules that keep sandboxes and template builds from
 * the host and its private networks.
 *
 * <p>Owns: which destinations a sandbox may reach ({@link
 * io.sandboxes.local.internal.egress.Destinations}, {@link
 * io.sandboxes.local.internal.egress.EgressPolicy}), a policy as the ordered rules a runtime
 * enforces ({@link io.sandboxes.local.internal.egress.PolicyRules}), the gateway's name and HTTP
 * proxy ({@link io.sandboxes.local.internal.egress.EgressGateway}), header rules and the
 * interception of the destinations that have them ({@link
 * io.sandboxes.local.internal.egress.HeaderRules}, {@link
 * io.sandboxes.local.internal.egress.RuleInterception}), the server's CA for it ({@link
 * io.sandboxes.local.internal.egress.GatewayCa}, key in memory only) and where a sandbox's trust
 * store is ({@link io.sandboxes.local.internal.egress.TrustStore}), how it dials an allowed
 * destination: directly, through a sandbox's own {@code egressProxy} or through the server-wide
 * upstream proxy ({@link io.sandboxes.local.internal.egress.UpstreamProxy}, {@code Dialer},
 * {@code ProxyDialer}, which speaks SOCKS5 and HTTP {@code CONNECT}), the witnesses verification
 * probes, the address-to-sandbox table the gateway decides by, and the order of the steps ({@link
 * io.sandboxes.local.internal.egress.SandboxNetwork}: a sandbox's own firewall is written before
 * it joins a network, and set back to deny-all when a join fails). It asks the runtime where an
 * instance is attached and to move it ({@link io.sandboxes.local.internal.runtime.NetworkAttachments}),
 * and to write the rules ({@link io.sandboxes.local.internal.runtime.EgressEnforcement}); how they
 * are written (a namespace entered from the host, the host's chains, a runtime's resolver) is the
 * runtime's. Must not touch: sandboxes' records or their daemons, HTTP, the runtime's calls or
 * firewalls. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.egress;

import org.jspecify.annotations.NullMarked;
