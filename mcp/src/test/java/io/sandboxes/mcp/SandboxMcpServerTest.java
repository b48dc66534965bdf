package io.sandboxes.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.sandboxes.mcp.ToolCalls.call;
import static io.sandboxes.mcp.ToolCalls.text;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.sandboxes.SandboxInfo;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.local.LocalServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The MCP server as an MCP client starts it: a child process over stdio, driven by the MCP Java
 * SDK's own client, its sandboxes on a local server this test runs (so the test can see them).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SandboxMcpServerTest {
  private LocalServer server;
  private SandboxClient observer;

  @BeforeAll
  void start() {
    server = LocalServer.builder().build().start();
    observer = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey());
  }

  @AfterAll
  void stop() {
    if (observer != null) {
      observer.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private McpSyncClient client(String... options) {
    List<String> args = new java.util.ArrayList<>(List.of("-cp", System.getProperty("java.class.path"), SandboxMcpServer.class.getName(),
        "--provider", "e2b"));
    args.addAll(List.of(options));
    ServerParameters params = ServerParameters.builder(Path.of(System.getProperty("java.home"), "bin", "java").toString())
        .args(args)
        .env(Map.of("E2B_API_KEY", server.apiKey(), "E2B_API_URL", server.apiUrl().toString(),
            "E2B_SANDBOX_URL", server.sandboxUrl().toString(), "PATH", System.getenv("PATH")))
        .build();
    McpSyncClient c = McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
        .requestTimeout(Duration.ofSeconds(90)).build();
    c.initialize();
    return c;
  }



  private List<String> running() {
    return observer.list().stream().map(SandboxInfo::id).toList();
  }

  @Test
  @DisplayName("a client lists the five tools and calls each; a miss is an error result, a failing command is not")
  void toolsOverStdio() {
    McpSyncClient c = client("--output-limit", "500");
    try {
      assertThat(c.listTools().tools().stream().map(McpSchema.Tool::name))
          .containsExactlyInAnyOrder("run_command", "run_python", "read_file", "write_file", "list_folder");
      McpSchema.Tool write = c.listTools().tools().stream().filter(t -> t.name().equals("write_file")).findFirst().orElseThrow();
      assertThat(String.valueOf(write.inputSchema().get("required"))).isEqualTo("[content, path]");
      assertThat(c.listTools().tools().stream().filter(t -> t.name().startsWith("run_")).map(McpSchema.Tool::description))
          .hasSize(2).allSatisfy(d -> assertThat(d).contains("Network: the sandbox has no network access (closed by default)"));

      CallToolResult wrote = call(c, "write_file", Map.of("path", "/home/user/a/b.txt", "content", "from mcp"));
      assertThat(wrote.isError()).isFalse();
      assertThat(text(wrote)).isEqualTo("wrote 8 bytes to /home/user/a/b.txt");
      assertThat(text(call(c, "read_file", Map.of("path", "/home/user/a/b.txt")))).isEqualTo("from mcp");
      assertThat(text(call(c, "list_folder", Map.of("path", "/home/user/a")))).isEqualTo("b.txt (8 bytes)");
      assertThat(text(call(c, "run_python", Map.of("code", "print(6 * 7)")))).isEqualTo("exit code: 0\nstdout:\n42\n");

      CallToolResult failed = call(c, "run_command", Map.of("command", "echo no >&2; exit 2"));
      assertThat(failed.isError()).as("a command that fails is a result, not an error").isFalse();
      assertThat(text(failed)).isEqualTo("exit code: 2\nstderr:\nno\n");

      CallToolResult missing = call(c, "read_file", Map.of("path", "/home/user/nope.txt"));
      assertThat(missing.isError()).isTrue();
      assertThat(text(missing)).startsWith("error:").contains("/home/user/nope.txt");

      CallToolResult noArgument = call(c, "run_command", Map.of());
      assertThat(noArgument.isError()).isTrue();
      assertThat(text(noArgument)).contains("command");

      String long_ = text(call(c, "run_command", Map.of("command", "seq 1 10000")));
      assertThat(long_).contains("characters cut; 48894 in all").hasSizeLessThan(700);

      assertThatThrownBy(() -> call(c, "format_disk", Map.of())).hasMessageContaining("Unknown tool");
    } finally {
      c.closeGracefully();
    }
  }

  @Test
  @DisplayName("two clients get sandboxes of their own, and a client that goes away leaves no sandbox running")
  void sessionsAreIsolatedAndCleanedUp() {
    List<String> before = running();
    McpSyncClient first = client();
    McpSyncClient second = client();
    try {
      assertThat(text(call(first, "write_file", Map.of("path", "/home/user/mine.txt", "content", "first's")))).startsWith("wrote");
      CallToolResult other = call(second, "read_file", Map.of("path", "/home/user/mine.txt"));
      assertThat(other.isError()).isTrue();
      assertThat(text(call(second, "run_command", Map.of("command", "true")))).isEqualTo("exit code: 0");
      assertThat(running()).hasSize(before.size() + 2);
    } finally {
      first.closeGracefully();
      second.closeGracefully();
    }
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(running()).containsExactlyInAnyOrderElementsOf(before));
  }
}
