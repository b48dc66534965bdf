package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The README's MCP command: {@code java -jar} of the shaded jar the mcp module packaged in this build. */
class McpJarTest {
  @Test
  @DisplayName("java -jar sandboxes-mcp-VERSION-all.jar serves MCP over stdio, its sandboxes on the local runtime")
  void runnableJar() throws Exception {
    Path jar;
    try (Stream<Path> built = Files.list(Path.of("..", "mcp", "target"))) {
      jar = built.filter(p -> p.getFileName().toString().matches("sandboxes-mcp-.*-all\\.jar")).findFirst()
          .orElseThrow(() -> new AssertionError("the mcp module's -all.jar was not built: run the build from the project's root"));
    }
    ServerParameters server = ServerParameters.builder(Path.of(System.getProperty("java.home"), "bin", "java").toString())
        .args("-jar", jar.toAbsolutePath().toString()).build();
    McpSyncClient client = McpClient.sync(new StdioClientTransport(server, McpJsonDefaults.getMapper()))
        .requestTimeout(Duration.ofSeconds(120)).build();
    try {
      McpSchema.InitializeResult init = client.initialize();
      assertThat(init.serverInfo().name()).isEqualTo("sandboxes");
      assertThat(init.serverInfo().version()).isNotEqualTo("dev");
      McpSchema.CallToolResult r = client.callTool(new McpSchema.CallToolRequest("run_command", Map.of("command", "echo from the jar")));
      assertThat(((McpSchema.TextContent) r.content().get(0)).text()).isEqualTo("exit code: 0\nstdout:\nfrom the jar\n");
    } finally {
      client.closeGracefully();
    }
  }
}
