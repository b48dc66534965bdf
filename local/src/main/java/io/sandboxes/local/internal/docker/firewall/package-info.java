/**
 * Docker's egress enforcement ({@link io.sandboxes.local.internal.docker.firewall.DockerEgressEnforcement},
 * the {@code internal.runtime.EgressEnforcement} of containers that share the host's kernel): each
 * sandbox's rules written with iptables into its container's network namespace, entered from the
 * host with {@code nsenter}, and into the host's own chains ({@link
 * io.sandboxes.local.internal.docker.firewall.HostFirewall}, hooked into Docker's {@code
 * DOCKER-USER}), which it watches and repairs.
 *
 * <p>Owns the {@code SANDBOXES-*} and {@code SBX-*} chains of the host's filter table, the hooks
 * into them, and the filter table of each sandbox's namespace. Must not touch: any rule it did not
 * make, Docker's own chains beyond its hooks, sandboxes' records, or what a policy allows (that is
 * egress's, handed over as {@code internal.runtime.EgressRules}). It may use {@code
 * internal.runtime} and {@code internal.host} only. Only the composition root makes its classes.
 * Not API.
 */
@NullMarked
package io.sandboxes.local.internal.docker.firewall;

import org.jspecify.annotations.NullMarked;
