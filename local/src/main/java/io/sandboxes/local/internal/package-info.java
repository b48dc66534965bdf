/**
 * The sandbox side of the local server: the sandbox table and the collaborators of {@link
 * io.sandboxes.local.internal.Registry} (lifecycle, starts and the warm pool, forks, recovery
 * after a restart, outside events, networking, metrics, the disk guard, state files), snapshots
 * ({@link io.sandboxes.local.internal.Templates}), volumes, and the processes and files of each
 * sandbox through its daemon.
 *
 * <p>Everything it asks of the runtime goes through {@code internal.runtime} (the {@link
 * io.sandboxes.local.internal.runtime.SandboxEngine} and the network attachments it is given):
 * nothing here may call Docker (docker-java or {@code internal.docker}) or depend on a container,
 * a mount or a unix socket; comments name Docker only where they explain what was seen on it. One
 * name is still borrowed: a process's output events carry {@code internal.docker.RawExec.Stream}
 * (stdout, stderr, PTY), the type the HTTP layer's process calls read. Only the composition root
 * ({@code ServerParts}) picks the runtime. Must not touch the HTTP layer (which calls it, never
 * the other way round). Not API.
 */
@NullMarked
package io.sandboxes.local.internal;

import org.jspecify.annotations.NullMarked;
