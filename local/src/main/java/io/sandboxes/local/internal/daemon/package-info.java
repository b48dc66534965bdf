/**
 * The host side of the in-sandbox daemon ({@code daemon/} at the top of the repository): a
 * listening unix socket per sandbox folder, the framed and flow-controlled protocol over it, and
 * typed calls for processes and files. Not used by the runtime yet; nothing outside this package
 * depends on it except its tests and the benchmark. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.daemon;

import org.jspecify.annotations.NullMarked;
