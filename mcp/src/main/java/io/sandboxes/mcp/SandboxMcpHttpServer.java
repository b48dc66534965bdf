package io.sandboxes.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.sandboxes.dsl.SandboxToolkit;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The sandbox tools over MCP's streamable HTTP transport, for clients that reach servers by URL
 * rather than starting them: one endpoint, {@code /mcp}, each MCP session with a sandbox of its
 * own (the tools are {@link SandboxMcpServer#tools}).
 *
 * <p>Every request must carry {@code Authorization: Bearer <token>}: whoever reaches the port
 * can otherwise start containers on this machine. The {@code Host} header must name the address
 * served (so a web page cannot reach a loopback server through a rebinding DNS name), and a
 * browser's {@code Origin}, when one is sent, must be that address too. A session the client
 * ends ({@code DELETE /mcp}) has its sandbox killed at once; one that is merely abandoned keeps
 * it until the sandbox timeout has passed since its last call, or until the toolkit is closed.
 *
 * <pre>{@code
 * try (SandboxToolkit toolkit = SandboxToolkit.builder(Sandboxes.local()).build();
 *      SandboxMcpHttpServer http = SandboxMcpHttpServer.start(toolkit,
 *          new InetSocketAddress(InetAddress.getLoopbackAddress(), 8765), token)) {
 *   System.err.println("MCP at " + http.url());
 *   ...
 * }
 * }</pre>
 */
public final class SandboxMcpHttpServer implements AutoCloseable {
  /** The path the MCP endpoint is served at. */
  public static final String ENDPOINT = "/mcp";
  private static final int MIN_TOKEN = 16;

  private final Server jetty;
  private final McpSyncServer mcp;
  private final URI url;

  private SandboxMcpHttpServer(Server jetty, McpSyncServer mcp, URI url) {
    this.jetty = jetty;
    this.mcp = mcp;
    this.url = url;
  }

  /**
   * Serves the tools over streamable HTTP until closed.
   *
   * @param toolkit what answers the calls; stays the caller's to close (closing it kills every
   *     session's sandbox)
   * @param bind where to listen; port 0 takes a free one. Prefer a loopback address: anything
   *     else is reachable from other machines, guarded only by the token
   * @param token the bearer token every request must carry, at least 16 characters
   * @return the running server
   * @throws IllegalArgumentException when the token is too short
   * @throws IllegalStateException when the address cannot be listened on
   */
  public static SandboxMcpHttpServer start(SandboxToolkit toolkit, InetSocketAddress bind, String token) {
    Objects.requireNonNull(toolkit, "toolkit");
    Objects.requireNonNull(bind, "bind");
    if (token == null || token.strip().length() < MIN_TOKEN) {
      throw new IllegalArgumentException("the bearer token must have at least " + MIN_TOKEN + " characters");
    }
    List<String> names = hostNames(bind.getAddress()); // refused before anything listens
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setName("sandboxes-mcp-http");
    threads.setVirtualThreadsExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
    Server jetty = new Server(threads);
    org.eclipse.jetty.server.HttpConfiguration config = new org.eclipse.jetty.server.HttpConfiguration();
    config.setSendServerVersion(false);
    ServerConnector connector = new ServerConnector(jetty, new org.eclipse.jetty.server.HttpConnectionFactory(config));
    InetAddress address = bind.getAddress();
    connector.setHost(address == null ? null : address.getHostAddress());
    connector.setPort(bind.getPort());
    jetty.addConnector(connector);
    try {
      connector.open();
    } catch (IOException e) {
      throw new IllegalStateException("cannot listen on " + bind + ": " + e.getMessage(), e);
    }
    int port = connector.getLocalPort();
    List<String> hosts = new ArrayList<>();
    List<String> origins = new ArrayList<>();
    for (String host : names) {
      hosts.add(host + ":" + port);
      origins.add("http://" + host + ":" + port);
    }
    HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider.builder()
        .jsonMapper(McpJsonDefaults.getMapper())
        .mcpEndpoint(ENDPOINT)
        .securityValidator(DefaultServerTransportSecurityValidator.builder().allowedHosts(hosts).allowedOrigins(origins).build())
        .build();
    McpSyncServer mcp = SandboxMcpServer.configure(McpServer.sync(transport), toolkit);
    ServletContextHandler context = new ServletContextHandler();
    ServletHolder servlet = new ServletHolder(transport);
    servlet.setAsyncSupported(true);
    context.addServlet(servlet, ENDPOINT);
    FilterHolder gate = new FilterHolder(new Gate(toolkit, token.strip()));
    gate.setAsyncSupported(true);
    context.addFilter(gate, "/*", EnumSet.of(DispatcherType.REQUEST));
    jetty.setHandler(context);
    try {
      jetty.start();
    } catch (Exception e) {
      mcp.close();
      try {
        jetty.stop();
      } catch (Exception again) {
        e.addSuppressed(again);
      }
      throw new IllegalStateException("the MCP HTTP server did not start: " + e.getMessage(), e);
    }
    return new SandboxMcpHttpServer(jetty, mcp, URI.create(origins.get(0) + ENDPOINT));
  }

  /** The names a client may use for the address in its Host header: loopback's usual ones too. */
  private static List<String> hostNames(InetAddress address) {
    List<String> names = new ArrayList<>();
    if (address == null || address.isAnyLocalAddress()) {
      throw new IllegalArgumentException("give the address to serve (a wildcard address cannot be checked against Host headers)");
    }
    names.add(literal(address));
    if (address.isLoopbackAddress()) {
      for (String n : List.of("127.0.0.1", "localhost", "[::1]")) {
        if (!names.contains(n)) {
          names.add(n);
        }
      }
    }
    return names;
  }

  private static String literal(InetAddress address) {
    String a = address.getHostAddress();
    return address instanceof java.net.Inet6Address ? "[" + a.replaceAll("%.*$", "") + "]" : a;
  }

  /**
   * The endpoint's URL.
   *
   * @return e.g. {@code http://127.0.0.1:8765/mcp}
   */
  public URI url() {
    return url;
  }

  /** Stops serving; the sessions' sandboxes are the toolkit's, which the caller closes. */
  @Override
  public void close() {
    try {
      mcp.closeGracefully();
    } finally {
      try {
        jetty.stop();
      } catch (Exception e) {
        throw new IllegalStateException("the MCP HTTP server did not stop cleanly: " + e.getMessage(), e);
      }
    }
  }

  /** Refuses requests without the token; kills a session's sandbox once the session is deleted. */
  private static final class Gate implements Filter {
    private final SandboxToolkit toolkit;
    private final byte[] expected;

    Gate(SandboxToolkit toolkit, String token) {
      this.toolkit = toolkit;
      this.expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException {
      HttpServletRequest req = (HttpServletRequest) request;
      HttpServletResponse res = (HttpServletResponse) response;
      String given = req.getHeader("Authorization");
      if (given == null || !MessageDigest.isEqual(expected, given.strip().getBytes(StandardCharsets.UTF_8))) {
        res.setHeader("WWW-Authenticate", "Bearer");
        res.sendError(HttpServletResponse.SC_UNAUTHORIZED, "a bearer token is required");
        return;
      }
      chain.doFilter(request, response);
      String session = req.getHeader("Mcp-Session-Id");
      if ("DELETE".equals(req.getMethod()) && session != null && res.getStatus() / 100 == 2) {
        toolkit.release(session);
      }
    }
  }
}
