/**
 * Sandboxes as Model Context Protocol tools: {@link io.sandboxes.mcp.SandboxMcpServer}, runnable
 * over stdio with {@code java -jar}.
 */
@NullMarked
package io.sandboxes.mcp;

import org.jspecify.annotations.NullMarked;
