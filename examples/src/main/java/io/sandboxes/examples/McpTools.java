package io.sandboxes.examples;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.sandboxes.mcp.SandboxMcpServer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * MCP: the sandboxes MCP server started the way an MCP client starts it (a child process over
 * stdio, here with this program's class path; {@code java -jar sandboxes-mcp-VERSION-all.jar}
 * outside), then driven by the MCP Java SDK's client: the tools it lists, a program run, a file
 * that is not there (an error result), and the close, which ends the server and its sandbox.
 *
 * <p>Run it with {@code scripts/run-examples.sh McpTools}.
 */
public final class McpTools {
  private McpTools() {}

  public static void main(String[] args) {
    run(System.out);
  }

  static void run(PrintStream out) {
    ServerParameters server = ServerParameters.builder(Path.of(System.getProperty("java.home"), "bin", "java").toString())
        .args("-cp", System.getProperty("java.class.path"), SandboxMcpServer.class.getName(), "--provider", "local")
        .build();
    McpSyncClient client = McpClient.sync(new StdioClientTransport(server, McpJsonDefaults.getMapper()))
        .requestTimeout(Duration.ofSeconds(120)).build();
    try {
      client.initialize();
      for (McpSchema.Tool tool : client.listTools().tools()) {
        out.println("mcp tool " + tool.name());
      }
      out.println(text(client.callTool(new McpSchema.CallToolRequest("run_python", Map.of("code", "print('hello over MCP')")))));
      McpSchema.CallToolResult missing = client.callTool(new McpSchema.CallToolRequest("read_file", Map.of("path", "/nope")));
      out.println("error result: " + missing.isError() + ", " + text(missing));
    } finally {
      client.closeGracefully();
    }
    out.println("client closed: the server killed its sandbox and ended");
  }

  private static String text(McpSchema.CallToolResult r) {
    return ((McpSchema.TextContent) r.content().get(0)).text();
  }
}
