package io.sandboxes.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.dsl.Sandboxes;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiFunction;

/**
 * A Model Context Protocol server whose tools are sandboxes: {@code run_command},
 * {@code run_python}, {@code read_file}, {@code write_file} and {@code list_folder}, each client
 * session with a sandbox of its own (the answers are {@link SandboxToolkit}'s: compact text, and
 * a failure as an {@code error:} result the model can act on).
 *
 * <p>Run it over stdio, as desktop assistants and IDEs start MCP servers:
 * {@code java -jar sandboxes-mcp-VERSION-all.jar [--provider local|e2b|auto] [--template NAME]
 * [--timeout SECONDS] [--command-timeout SECONDS] [--output-limit CHARS] [--allow-out DEST]...}.
 * With {@code local} (the default) it starts the local runtime on this machine's Docker; with
 * {@code e2b} it uses E2B's cloud or any E2B-compatible server named by {@code E2B_API_KEY},
 * {@code E2B_API_URL}, {@code E2B_SANDBOX_URL}; {@code auto} picks E2B when a key is set. Egress
 * is deny-by-default unless {@code --allow-out} opens destinations. When the client closes the
 * server's stdin, every sandbox it made is killed and the process ends. Logs go to stderr.
 *
 * <p>With {@code --http PORT [--host ADDRESS]} it serves MCP's streamable HTTP transport at
 * {@code http://ADDRESS:PORT/mcp} instead ({@link SandboxMcpHttpServer}; loopback unless an
 * address is given), each request carrying {@code Authorization: Bearer} and the token in
 * {@value #TOKEN_ENV} (an environment variable, not an option, so it is not on the process
 * list); it runs until a signal ends it, which kills every session's sandbox.
 */
public final class SandboxMcpServer {
  /** The environment variable holding the bearer token of {@code --http}. */
  public static final String TOKEN_ENV = "SANDBOXES_MCP_TOKEN";

  private SandboxMcpServer() {}

  /**
   * The tools, as a server built on any transport serves them; each session's calls go to the
   * conversation named by its session id.
   *
   * @param toolkit what answers the calls; stays the caller's to close
   * @return the five tools' specifications
   */
  public static List<SyncToolSpecification> tools(SandboxToolkit toolkit) {
    List<SyncToolSpecification> tools = new ArrayList<>();
    String network = " " + toolkit.networkPolicy();
    tools.add(tool("run_command", "Runs a bash command line in your own Linux sandbox (kept for this session: files you "
        + "write stay there) and returns its exit code, stdout and stderr. Long outputs are cut in the middle." + network,
        Map.of("command", "the bash command line to run"), (session, a) -> toolkit.runCommand(session, a.get("command"))));
    tools.add(tool("run_python", "Runs a Python 3 program in your own Linux sandbox and returns its exit code, stdout "
        + "and stderr. Print what you want to see." + network, Map.of("code", "the Python 3 source code"),
        (session, a) -> toolkit.runPython(session, a.get("code"))));
    tools.add(tool("read_file", "Reads a text file from your sandbox. Long files are cut in the middle.",
        Map.of("path", "the file's path"), (session, a) -> toolkit.readFile(session, a.get("path"))));
    tools.add(tool("write_file", "Writes a text file in your sandbox, replacing it if it exists and making missing folders.",
        Map.of("path", "the file's path", "content", "the whole text of the file"),
        (session, a) -> toolkit.writeFile(session, a.get("path"), a.get("content"))));
    tools.add(tool("list_folder", "Lists a folder of your sandbox: one line per entry, folders end with a slash.",
        Map.of("path", "the folder's path"), (session, a) -> toolkit.listFolder(session, a.get("path"))));
    return tools;
  }

  /** One tool: every parameter a required string; a missing or non-string one is an error result. */
  private static SyncToolSpecification tool(String name, String description, Map<String, String> parameters,
      BiFunction<String, Map<String, String>, String> call) {
    Map<String, Object> properties = new java.util.LinkedHashMap<>();
    parameters.keySet().stream().sorted()
        .forEach(p -> properties.put(p, Map.of("type", "string", "description", parameters.get(p))));
    McpSchema.Tool tool = McpSchema.Tool.builder().name(name).description(description)
        .inputSchema(McpSchema.JsonSchema.builder().type("object").properties(properties)
            .required(List.copyOf(properties.keySet())).build())
        .build();
    return SyncToolSpecification.builder().tool(tool).callHandler((McpSyncServerExchange exchange, McpSchema.CallToolRequest request) -> {
      Map<String, Object> given = request.arguments() == null ? Map.of() : request.arguments();
      Map<String, String> args = new java.util.HashMap<>();
      for (String p : parameters.keySet()) {
        if (!(given.get(p) instanceof String s)) {
          return result("error: " + name + " needs the string argument '" + p + "'");
        }
        args.put(p, s);
      }
      return result(call.apply(exchange.sessionId(), args));
    }).build();
  }

  private static CallToolResult result(String text) {
    return CallToolResult.builder().addTextContent(text).isError(text.startsWith("error:")).build();
  }

  /**
   * Serves the tools on a transport until it closes.
   *
   * @param toolkit what answers the calls; stays the caller's to close
   * @param transport the transport, e.g. {@link StdioServerTransportProvider}
   * @param mapper the transport's JSON mapper
   * @return the running server
   */
  public static McpSyncServer serve(SandboxToolkit toolkit, McpServerTransportProvider transport, McpJsonMapper mapper) {
    return configure(McpServer.sync(transport), toolkit);
  }

  /** The server's description and tools, on whichever transport's specification. */
  static <S extends McpServer.SyncSpecification<S>> McpSyncServer configure(S spec, SandboxToolkit toolkit) {
    return spec.serverInfo("sandboxes", version())
        .instructions("Each session has a Linux sandbox of its own: run commands and Python there, read and write its files. "
            + toolkit.networkPolicy())
        .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
        .tools(tools(toolkit))
        .build();
  }

  private static String version() {
    String v = SandboxMcpServer.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  /**
   * Runs the server over stdio; see the class documentation for the options.
   *
   * @param args the options
   * @throws InterruptedException when interrupted while serving
   */
  public static void main(String[] args) throws InterruptedException {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("sandboxes-mcp: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(2);
      return;
    }
    PrintStream protocol = System.out;
    System.setOut(System.err); // nothing but the protocol may reach stdout
    CountDownLatch stdinClosed = new CountDownLatch(1);
    InputStream in = new FilterInputStream(System.in) {
      @Override
      public int read() throws IOException {
        int b = super.read();
        if (b < 0) {
          stdinClosed.countDown();
        }
        return b;
      }

      @Override
      public int read(byte[] buf, int off, int len) throws IOException {
        int n = super.read(buf, off, len);
        if (n < 0) {
          stdinClosed.countDown();
        }
        return n;
      }
    };
    SandboxClient client = options.client();
    SandboxToolkit toolkit = options.toolkit(client);
    // a client may end the server with a signal rather than by closing stdin: the sandboxes go either way
    Thread cleanup = new Thread(() -> {
      try {
        toolkit.close();
      } finally {
        client.close();
      }
    }, "sandboxes-mcp-shutdown");
    Runtime.getRuntime().addShutdownHook(cleanup);
    if (options.httpPort() >= 0) {
      String token = System.getenv(TOKEN_ENV);
      SandboxMcpHttpServer http;
      try {
        http = SandboxMcpHttpServer.start(toolkit, new InetSocketAddress(InetAddress.getByName(options.host()), options.httpPort()),
            token == null ? "" : token);
      } catch (IllegalArgumentException | IllegalStateException | java.net.UnknownHostException e) {
        System.err.println("sandboxes-mcp: " + (token == null || token.strip().length() < 16
            ? "--http needs a bearer token of at least 16 characters in $" + TOKEN_ENV : e.getMessage()));
        System.exit(2);
        return;
      }
      System.err.println("sandboxes-mcp: serving MCP (streamable HTTP) at " + http.url());
      new CountDownLatch(1).await(); // until a signal ends the process: the shutdown hook kills the sandboxes
      return;
    }
    McpJsonMapper mapper = McpJsonDefaults.getMapper();
    McpSyncServer server = serve(toolkit, new StdioServerTransportProvider(mapper, in, protocol), mapper);
    stdinClosed.await();
    server.closeGracefully();
    System.exit(0); // runs the cleanup; the transport's threads are not daemons
  }

  /** The command line's options. */
  record Options(String provider, String template, Duration timeout, Duration commandTimeout, int outputLimit, List<String> allowOut,
      int httpPort, String host) {
    static final String USAGE = "usage: sandboxes-mcp [--provider local|e2b|auto] [--template NAME] [--timeout SECONDS] "
        + "[--command-timeout SECONDS] [--output-limit CHARS] [--allow-out DEST]... [--http PORT [--host ADDRESS]]\n"
        + "  --http serves streamable HTTP at http://ADDRESS:PORT/mcp (ADDRESS 127.0.0.1 unless given) instead of stdio;\n"
        + "  every request must carry Authorization: Bearer $" + TOKEN_ENV + " (at least 16 characters)";

    static Options parse(String[] args) {
      String provider = "local";
      String template = null;
      Duration timeout = Duration.ofMinutes(30);
      Duration commandTimeout = Duration.ofSeconds(60);
      int outputLimit = 4_000;
      List<String> allowOut = new ArrayList<>();
      int httpPort = -1;
      String host = null;
      for (int i = 0; i < args.length; i++) {
        String flag = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(flag + " needs a value");
        }
        String value = args[++i];
        switch (flag) {
          case "--provider" -> {
            if (!List.of("local", "e2b", "auto").contains(value)) {
              throw new IllegalArgumentException("--provider is local, e2b or auto, not " + value);
            }
            provider = value;
          }
          case "--template" -> template = value;
          case "--timeout" -> timeout = Duration.ofSeconds(positive(flag, value));
          case "--command-timeout" -> commandTimeout = Duration.ofSeconds(positive(flag, value));
          case "--output-limit" -> outputLimit = (int) positive(flag, value);
          case "--allow-out" -> allowOut.add(value);
          case "--http" -> httpPort = port(value);
          case "--host" -> host = value;
          default -> throw new IllegalArgumentException("unknown option " + flag);
        }
      }
      if (host != null && httpPort < 0) {
        throw new IllegalArgumentException("--host is for --http");
      }
      return new Options(provider, template == null ? "" : template, timeout, commandTimeout, outputLimit, List.copyOf(allowOut),
          httpPort, host == null ? "127.0.0.1" : host);
    }

    private static int port(String value) {
      try {
        int n = Integer.parseInt(value);
        if (n >= 0 && n <= 65535) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new IllegalArgumentException("--http needs a port from 0 (any free one) to 65535, not " + value);
    }

    private static long positive(String flag, String value) {
      try {
        long n = Long.parseLong(value);
        if (n > 0 && n <= Integer.MAX_VALUE) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new IllegalArgumentException(flag + " needs a positive whole number, not " + value);
    }

    SandboxClient client() {
      return switch (provider) {
        case "e2b" -> Sandboxes.e2b();
        case "auto" -> Sandboxes.auto();
        default -> Sandboxes.local();
      };
    }

    SandboxToolkit toolkit(SandboxClient client) {
      SandboxToolkit.Builder b = SandboxToolkit.builder(client).sandboxTimeout(timeout).commandTimeout(commandTimeout)
          .outputLimit(outputLimit).allowOut(allowOut.toArray(String[]::new));
      if (!template.isEmpty()) {
        b.template(template);
      }
      return b.build();
    }
  }
}
