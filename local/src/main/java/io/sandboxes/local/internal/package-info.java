/**
 * The sandbox side of the local server: {@link io.sandboxes.local.internal.Registry}, the table
 * of a server's sandboxes, and the collaborators it coordinates, one responsibility each: starts
 * and warm pool members ({@code SandboxStarts}, {@code WarmPool}), kill, pause, resume and
 * deadlines ({@code SandboxLifecycle}), waking a paused sandbox for traffic, one resume at a time
 * ({@code TrafficWake}), forks ({@code Forks}, {@code ForkImages}), state files and
 * recovery after a restart ({@code StateFiles}, {@code SandboxRecovery}), what happens to
 * sandboxes from outside ({@code OutsideEvents}, {@code OutsideFreeze}), joining the sandbox
 * network ({@code SandboxNetworking}), usage ({@code MetricsSampler}, {@code DiskGuard}), and one
 * sandbox's processes, files and ports ({@code LocalSandbox}, {@code SandboxProcesses}, {@code
 * DaemonFiles}, {@code PortForwards}); plus snapshots ({@link
 * io.sandboxes.local.internal.Templates}) and volumes, with their content read and written
 * without a sandbox through a helper instance per volume ({@code VolumeWorkers},
 * {@code VolumeContent}). A file's entry ({@code FileEntry}) and a sandbox's network policy
 * ({@code NetworkPolicy}) are records the HTTP layer writes as they are, in E2B's field order.
 *
 * <p>Owns each sandbox's record and its transitions. Everything it asks of the runtime goes
 * through {@code internal.runtime} (the {@link io.sandboxes.local.internal.runtime.SandboxEngine}
 * and the network attachments it is given): nothing here may call Docker (docker-java or {@code
 * internal.docker}) or depend on a container, a mount or a unix socket; comments name Docker only
 * where they explain what was seen on it. A process's output events name their stream in the
 * seam's own terms ({@code SandboxProcess.Stream}: stdout, stderr, PTY), which the HTTP layer's
 * process calls read. Only the composition root ({@code ServerParts}) picks the runtime. Must not
 * touch the HTTP layer, which calls into this package, never the other way round. Not API.
 */
@NullMarked
package io.sandboxes.local.internal;

import org.jspecify.annotations.NullMarked;
