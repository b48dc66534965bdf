package io.sandboxes.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.sandboxes.mcp.ToolCalls.call;
import static io.sandboxes.mcp.ToolCalls.text;
import static org.awaitility.Awaitility.await;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.sandboxes.SandboxInfo;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.local.LocalServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The MCP server over streamable HTTP, driven by the MCP Java SDK's own HTTP client, its sandboxes
 * on a local server this test runs (so the test can see them).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SandboxMcpHttpServerTest {
  private static final String TOKEN = "test-token-" + java.util.UUID.randomUUID();
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

  private List<String> running() {
    return observer.list().stream().map(SandboxInfo::id).toList();
  }

  private static McpSyncClient client(URI url, String token) {
    HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
        .builder(url.resolve("/").toString()).endpoint(SandboxMcpHttpServer.ENDPOINT)
        .jsonMapper(McpJsonDefaults.getMapper())
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + token))
        .build();
    McpSyncClient c = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(90)).build();
    c.initialize();
    return c;
  }



  @Test
  @DisplayName("two HTTP sessions get sandboxes of their own; a session the client deletes has its sandbox killed")
  void sessionsOverHttp() {
    List<String> before = running();
    try (SandboxToolkit toolkit = SandboxToolkit.builder(observer).build();
         SandboxMcpHttpServer http = SandboxMcpHttpServer.start(toolkit, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), TOKEN)) {
      assertThat(http.url().toString()).matches("http://127\\.0\\.0\\.1:\\d+/mcp");
      McpSyncClient first = client(http.url(), TOKEN);
      McpSyncClient second = client(http.url(), TOKEN);
      try {
        assertThat(first.listTools().tools()).extracting(McpSchema.Tool::name)
            .containsExactlyInAnyOrder("run_command", "run_python", "read_file", "write_file", "list_folder");
        assertThat(text(call(first, "write_file", Map.of("path", "/home/user/mine.txt", "content", "first's")))).startsWith("wrote");
        assertThat(text(call(first, "read_file", Map.of("path", "/home/user/mine.txt")))).isEqualTo("first's");
        CallToolResult other = call(second, "read_file", Map.of("path", "/home/user/mine.txt"));
        assertThat(other.isError()).isTrue();
        assertThat(text(call(second, "run_command", Map.of("command", "exit 3")))).isEqualTo("exit code: 3");
        assertThat(toolkit.conversations()).hasSize(2);
        assertThat(running()).hasSize(before.size() + 2);
        String firstSandbox = toolkit.conversations().stream().map(toolkit::sandboxId)
            .filter(id -> observer.connect(id).exec("test -e /home/user/mine.txt").exitCode() == 0).findFirst().orElseThrow();
        first.closeGracefully(); // the SDK's client deletes its session
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(running()).doesNotContain(firstSandbox)
            .hasSize(before.size() + 1));
        assertThat(text(call(second, "run_command", Map.of("command", "echo still")))).contains("still");
      } finally {
        second.closeGracefully();
      }
    }
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(running()).containsExactlyInAnyOrderElementsOf(before));
  }

  @Test
  @DisplayName("a request without the token is refused 401, one naming another host 421, before any sandbox is made; a short token is refused at start")
  void refusals() throws Exception {
    assertThatThrownBy(() -> SandboxMcpHttpServer.start(SandboxToolkit.builder(observer).build(),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), "short")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("16");
    List<String> before = running();
    try (SandboxToolkit toolkit = SandboxToolkit.builder(observer).build();
         SandboxMcpHttpServer http = SandboxMcpHttpServer.start(toolkit, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), TOKEN);
         HttpClient raw = HttpClient.newHttpClient()) {
      String init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
          + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
      for (String auth : new String[] {null, "Bearer wrong-token-of-some-length", "Basic " + TOKEN}) {
        HttpRequest.Builder b = HttpRequest.newBuilder(http.url()).header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream").POST(HttpRequest.BodyPublishers.ofString(init));
        if (auth != null) {
          b.header("Authorization", auth);
        }
        HttpResponse<String> r = raw.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(String.valueOf(auth)).isEqualTo(401);
        assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
      }
      // the right token but a Host a rebinding DNS name would bring
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), http.url().getPort())) {
        byte[] body = init.getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        out.write(("POST /mcp HTTP/1.1\r\nHost: rebound.example:" + http.url().getPort() + "\r\nAuthorization: Bearer " + TOKEN
            + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + body.length
            + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
        String status = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1)).readLine();
        assertThat(status).startsWith("HTTP/1.1 421"); // Misdirected Request: the SDK's Host check
      }
      assertThat(toolkit.conversations()).isEmpty();
      // and the same initialize with the token and the served host is answered
      HttpResponse<String> ok = raw.send(HttpRequest.newBuilder(http.url()).header("Content-Type", "application/json")
          .header("Accept", "application/json, text/event-stream").header("Authorization", "Bearer " + TOKEN)
          .POST(HttpRequest.BodyPublishers.ofString(init)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.headers().firstValue("Mcp-Session-Id")).isPresent();
    }
    assertThat(running()).containsExactlyInAnyOrderElementsOf(before);
  }

  @Test
  @DisplayName("the command line's --http serves the tools until a signal ends it, which kills the sessions' sandboxes; without a token it refuses to start")
  void commandLine() throws Exception {
    List<String> before = running();
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = List.of(javaBin, "-cp", System.getProperty("java.class.path"), SandboxMcpServer.class.getName(),
        "--provider", "e2b", "--http", "0");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().putAll(Map.of("E2B_API_KEY", server.apiKey(), "E2B_API_URL", server.apiUrl().toString(),
        "E2B_SANDBOX_URL", server.sandboxUrl().toString()));
    pb.environment().remove(SandboxMcpServer.TOKEN_ENV);
    Process refused = pb.redirectError(ProcessBuilder.Redirect.PIPE).start();
    String why = new String(refused.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(refused.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(refused.exitValue()).isEqualTo(2);
    assertThat(why).contains(SandboxMcpServer.TOKEN_ENV).doesNotContain("serving");

    pb.environment().put(SandboxMcpServer.TOKEN_ENV, TOKEN);
    Process p = pb.start();
    try {
      BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
      CompletableFuture<URI> url = CompletableFuture.supplyAsync(() -> {
        try {
          for (String line; (line = err.readLine()) != null; ) {
            int at = line.indexOf("serving MCP (streamable HTTP) at ");
            if (at >= 0) {
              return URI.create(line.substring(at + "serving MCP (streamable HTTP) at ".length()).strip());
            }
          }
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        throw new IllegalStateException("the server ended before it said where it serves");
      });
      URI at = url.get(90, TimeUnit.SECONDS);
      Thread.ofVirtual().start(() -> {
        try {
          err.transferTo(java.io.Writer.nullWriter()); // keep draining its log
        } catch (java.io.IOException ignored) {
          // it ended
        }
      });
      McpSyncClient c = client(at, TOKEN);
      assertThat(text(call(c, "run_command", Map.of("command", "echo over http")))).contains("over http");
      assertThat(running()).hasSize(before.size() + 1);
      p.destroy(); // SIGTERM, as a supervisor stops it; the session is not deleted first
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(running()).containsExactlyInAnyOrderElementsOf(before));
    } finally {
      p.destroyForcibly();
    }
  }
}
