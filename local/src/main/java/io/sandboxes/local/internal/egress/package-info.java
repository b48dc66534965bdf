/**
 * Egress: the sandboxes' network, the gateway every outbound connection of a sandbox goes
 * through, and the host firewall that keeps sandboxes and template builds from the host and its
 * private networks.
 *
 * <p>Owns: which destinations a sandbox may reach ({@link
 * io.sandboxes.local.internal.egress.Destinations}, {@link
 * io.sandboxes.local.internal.egress.EgressPolicy}), the address-to-sandbox table the gateway
 * decides by ({@link io.sandboxes.local.internal.egress.SandboxNetwork}), and the firewall rules
 * it puts on the host and repairs. It asks the runtime only where an instance is attached and to
 * move it ({@link io.sandboxes.local.internal.runtime.NetworkAttachments}); the enforcing (the
 * namespace's firewall entered from the host, the host's chains) is its own. Must not touch:
 * sandboxes' records or their daemons, HTTP, the runtime's calls, or any rule it did not make. Not
 * API.
 */
@NullMarked
package io.sandboxes.local.internal.egress;

import org.jspecify.annotations.NullMarked;
