/**
 * The local server's HTTP layer: E2B's control plane ({@link io.sandboxes.local.internal.http.ApiHandler})
 * and envd ({@link io.sandboxes.local.internal.http.EnvdHandler}), each one table of routes to
 * small handlers grouped by resource. It owns the wire: paths, methods, status codes, error texts
 * and the JSON bodies: request bodies are bound to records by {@code RequestBody}, by rules that
 * keep what each field has always accepted, and answers are records too; a field the server
 * cannot honour is refused naming it ({@code UnservedFields}); network header rules are checked by
 * {@code NetworkRules}. It depends on the registry, the
 * template builds, the sandboxes, volume content and secrets; nothing depends on it but {@code
 * io.sandboxes.local}, whose {@code ServerParts} builds the two handlers. Not API.
 */
@NullMarked
package io.sandboxes.local.internal.http;

import org.jspecify.annotations.NullMarked;
