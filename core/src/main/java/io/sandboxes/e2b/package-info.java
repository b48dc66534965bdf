/**
 * The E2B provider: {@link io.sandboxes.e2b.E2BSandboxProvider} and its sandbox handle, speaking
 * E2B's control-plane REST API and the in-sandbox daemon's Connect protocol.
 */
@NullMarked
package io.sandboxes.e2b;

import org.jspecify.annotations.NullMarked;
