/**
 * The server's secrets (E2B's secrets API): {@link io.sandboxes.local.internal.secrets.SecretStore}
 * keeps each one in a file of its own under the server's state folder, readable only by the
 * server's user, and answers with metadata only: a value goes in and never comes back out, in an
 * answer or a log line. The one reader of a value is the egress gateway, which fills it into a
 * request's header on the host as the request leaves ({@code SecretStore#valueOf}). Imports
 * nothing of the server's but {@code internal.common}, and nothing here reaches a sandbox. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.secrets;

import org.jspecify.annotations.NullMarked;
