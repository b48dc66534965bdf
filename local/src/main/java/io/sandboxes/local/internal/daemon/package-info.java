/**
 * The host side of the in-sandbox daemon ({@code daemon/} at the top of the repository): the
 * listening socket each sandbox's daemon connects to ({@link
 * io.sandboxes.local.internal.daemon.DaemonListener}), the framed, credit-controlled protocol
 * over it ({@link io.sandboxes.local.internal.daemon.FrameChannel}) and its typed calls for
 * processes, files, watches and ports ({@link io.sandboxes.local.internal.daemon.DaemonConnection}).
 *
 * <p>Owns: what one daemon connection may make the host hold ({@link
 * io.sandboxes.local.internal.daemon.Budget}), and the rule that nothing a daemon says is believed
 * beyond its own sandbox. Must not touch: sandboxes' records, HTTP, or the container runtime;
 * callers above hand it a connected channel and take typed answers. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.daemon;

import org.jspecify.annotations.NullMarked;
