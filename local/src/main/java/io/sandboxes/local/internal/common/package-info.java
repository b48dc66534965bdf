/**
 * The small types every room of the server uses: structured log lines ({@link
 * io.sandboxes.local.internal.common.StructuredLog}), the error an RPC or REST call answers with
 * ({@link io.sandboxes.local.internal.common.RpcError}) and random ids and tokens ({@link
 * io.sandboxes.local.internal.common.Ids}). Imports nothing of the server's, so every other package
 * may use it without a cycle. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.common;

import org.jspecify.annotations.NullMarked;
