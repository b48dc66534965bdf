package io.sandboxes.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/** A tool call through an MCP client, and its one text answer: the same on every transport. */
final class ToolCalls {
  private ToolCalls() {}

  static McpSchema.CallToolResult call(McpSyncClient c, String tool, Map<String, Object> args) {
    return c.callTool(new McpSchema.CallToolRequest(tool, args));
  }

  static String text(McpSchema.CallToolResult r) {
    assertThat(r.content()).hasSize(1);
    return ((McpSchema.TextContent) r.content().get(0)).text();
  }
}
