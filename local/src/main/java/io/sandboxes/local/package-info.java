/** The local E2B-compatible runtime: {@link io.sandboxes.local.LocalServer} and its command line. */
@NullMarked
package io.sandboxes.local;

import org.jspecify.annotations.NullMarked;
