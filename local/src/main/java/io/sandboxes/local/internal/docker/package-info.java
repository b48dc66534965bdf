/**
 * The Docker runtime: every call to the Docker engine the server makes. It implements the seam
 * ({@code internal.runtime}): {@link io.sandboxes.local.internal.docker.DockerSandboxEngine} (a
 * sandbox's instance is a container, confined as {@link io.sandboxes.local.internal.docker.DockerRuntime}
 * makes it; its events are Docker's event stream; its CPU and memory its cgroup files, read by
 * {@link io.sandboxes.local.internal.docker.CgroupReader}; its volumes Docker volumes; a captured
 * image a commit), {@link io.sandboxes.local.internal.docker.DockerDiskLimits} (the storage
 * driver's quota, else the writable layer measured), {@link
 * io.sandboxes.local.internal.docker.DockerNetworkAttachments} (Docker bridge networks and
 * {@code none}), {@link io.sandboxes.local.internal.docker.SocketDaemonLink} with {@link
 * io.sandboxes.local.internal.docker.DaemonInjection} (the daemon and a unix socket bind-mounted
 * into the container), {@link io.sandboxes.local.internal.docker.DockerBuildRuntime} (build
 * steps as containers), and, in {@code internal.docker.firewall}, the egress enforcement of
 * containers that share the host's kernel (iptables in each container's namespace and the host's
 * chains). It also finds the engine ({@link io.sandboxes.local.internal.docker.DockerLocator}),
 * checks the OCI runtime it runs sandboxes with ({@link io.sandboxes.local.internal.docker.SandboxRuntime})
 * and makes the base and code-interpreter images.
 *
 * <p>Owns the containers, images, volumes and networks labelled as the local runtime's, and the
 * daemon sockets' folders under the state folder. Must not touch: sandboxes' records or their
 * state files, HTTP, or egress policy (egress decides what a sandbox may reach and where it is
 * attached; this attaches it, and {@code internal.docker.firewall} writes the rules egress hands
 * over), or anything on the engine without the local
 * runtime's label. It may use {@code internal.runtime}, {@code internal.daemon},
 * {@code internal.common} and {@code internal.host}, never {@code internal} itself, {@code http},
 * {@code egress} or {@code build}. Only the composition root ({@code ServerParts}) makes its
 * classes. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.docker;

import org.jspecify.annotations.NullMarked;
