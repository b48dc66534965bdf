/**
 * The sandboxes: {@link io.sandboxes.local.internal.Registry}, the table of a server's sandboxes,
 * and the collaborators it coordinates, one responsibility each: starts and warm pool members
 * ({@code SandboxStarts}, {@code WarmPool}), kill, pause, resume and deadlines ({@code
 * SandboxLifecycle}), forks ({@code Forks}, {@code ForkImages}), state files and recovery after a
 * restart ({@code StateFiles}, {@code SandboxRecovery}), what happens to sandboxes from outside
 * ({@code OutsideEvents}, {@code ContainerEvents}, {@code OutsideFreeze}), joining the sandbox
 * network ({@code SandboxNetworking}), usage ({@code MetricsSampler}, {@code DiskGuard}), and one
 * sandbox's processes, files and ports ({@code LocalSandbox}, {@code SandboxProcesses}, {@code
 * DaemonFiles}, {@code PortForwards}); plus the snapshot catalogue ({@code Templates}) and volumes.
 *
 * <p>Owns each sandbox's record and its transitions. Reaches what runs sandboxes through {@code
 * internal.runtime}, the daemon through {@code internal.daemon}, builds through {@code
 * internal.build}. Must not touch HTTP: the {@code internal.http} handlers call into this package,
 * never the other way round. Not API.
 */
@NullMarked
package io.sandboxes.local.internal;

import org.jspecify.annotations.NullMarked;
