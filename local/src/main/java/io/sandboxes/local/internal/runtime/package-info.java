/**
 * The seam between the server and what runs sandboxes and builds templates, in terms any runtime
 * can give: an instance (a sandbox's; a container on Docker, a pod elsewhere), its state and its
 * events ({@link io.sandboxes.local.internal.runtime.InstanceEvents}), its resource and disk use
 * ({@link io.sandboxes.local.internal.runtime.DiskLimits}), the images captured from it, volumes,
 * the networks egress attaches it to ({@link io.sandboxes.local.internal.runtime.NetworkAttachments})
 * and how its egress rules are enforced ({@link io.sandboxes.local.internal.runtime.EgressEnforcement},
 * {@link io.sandboxes.local.internal.runtime.EgressRules}),
 * the link its daemon connects out over ({@link io.sandboxes.local.internal.runtime.DaemonLink}),
 * and the build steps of templates ({@link io.sandboxes.local.internal.runtime.BuildRuntime}).
 *
 * <p>Owns the interfaces and their vocabulary: the names of the labels the server keeps on an
 * instance ({@link io.sandboxes.local.internal.runtime.InstanceLabels}) and of what a
 * code-interpreter image records ({@link io.sandboxes.local.internal.runtime.CodeInterpreterTemplate}).
 * Docker is the one implementation today ({@code internal.docker}); nothing here may name a
 * container, a mount, a socket or a Docker call. It depends on {@code internal.daemon} alone
 * (a {@link io.sandboxes.local.internal.runtime.DaemonLink} hands over a
 * {@code DaemonConnection}, the server's end of the daemon protocol), and on no other package of
 * the server. Not API.
 */
@org.jspecify.annotations.NullMarked
package io.sandboxes.local.internal.runtime;
