/**
 * The host's own tools, found by absolute path and run with a deadline. Owns nothing else; imports
 * nothing of the server's, so every other package may use it. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.host;

import org.jspecify.annotations.NullMarked;
