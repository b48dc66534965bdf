/**
 * The local E2B-compatible runtime: {@link io.sandboxes.local.LocalServer}, {@link
 * io.sandboxes.local.LocalRuntimeService} (how clients find or start one) and the command line.
 * {@code ServerParts} puts a server's parts together and takes them apart; everything under
 * {@code internal} is implementation, laid out in docs/local-runtime.md ("Where things are").
 */
@NullMarked
package io.sandboxes.local;

import org.jspecify.annotations.NullMarked;
