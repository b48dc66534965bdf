/**
 * The small types every room of the server uses: structured log lines ({@link
 * io.sandboxes.local.internal.common.StructuredLog}), the error an RPC or REST call answers with
 * ({@link io.sandboxes.local.internal.common.RpcError}), random ids and tokens ({@link
 * io.sandboxes.local.internal.common.Ids}) and IPv4 addresses read without a lookup ({@link
 * io.sandboxes.local.internal.common.Ipv4}). Imports nothing of the server's, so every other package
 * may use it without a cycle. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.common;

import org.jspecify.annotations.NullMarked;
