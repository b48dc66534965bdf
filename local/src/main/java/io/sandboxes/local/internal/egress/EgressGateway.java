package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.common.StructuredLog;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress gateway: a forwarding HTTP proxy ({@code CONNECT} for TLS, absolute-URI requests for
 * plain HTTP) on the sandbox network's gateway address. It knows each sandbox by its address on
 * that network and lets a connection through only when that sandbox's policy allows the
 * destination by name or address, and the address is none that no policy opens (the host, its
 * loopback, other sandboxes, private ranges not named by IP: {@link Destinations}). A name is
 * resolved once, here, and the connection made to the very address checked. A refused connection
 * is closed without an answer, so a client sees a failed connection, never a reply it could
 * mistake for the destination's. Connections from an address no sandbox holds are closed unread,
 * and each sandbox holds at most {@value #MAX_CONNECTIONS_PER_SANDBOX} at once. An allowed
 * connection is made by a {@link Dialer}: through the sandbox's own {@code egressProxy}, else the
 * server-wide upstream proxy, else directly.
 */
public final class EgressGateway implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EgressGateway.class);
  private static final int MAX_HEADER = 64 * 1024;
  private static final int HEAD_TIMEOUT_MILLIS = 15_000;
  /** Gateway connections one sandbox may hold open at once (each costs the server two sockets). */
  static final int MAX_CONNECTIONS_PER_SANDBOX = 256;

  private final InetAddress bind;
  private final ServerSocket server;
  /** Every port listened on: the first one's, then any an earlier server's sandboxes still name. */
  private final ConcurrentMap<Integer, ServerSocket> listeners = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Function<String, EgressPolicy>> bySourceIp = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, AtomicInteger> openBySource = new ConcurrentHashMap<>();
  private final Map<String, InetSocketAddress> overrides;
  private final Destinations destinations;
  /** The server-wide upstream proxy, or null: connections go out directly unless a sandbox names its own. */
  private final @Nullable UpstreamProxy upstream;
  private volatile boolean closed;
  /** What serves destinations that have header rules; null until the server sets it (then none are intercepted). */
  private volatile @Nullable RuleInterception interception;

  /**
   * @param bind the address to listen on (the sandbox network's gateway)
   * @param overrides names the gateway answers itself (witnesses), to where it connects them
   * @param destinations what no policy opens
   */
  public EgressGateway(InetAddress bind, Map<String, InetSocketAddress> overrides, Destinations destinations) throws IOException {
    this(bind, overrides, destinations, null);
  }

  /**
   * @param bind the address to listen on (the sandbox network's gateway)
   * @param overrides names the gateway answers itself (witnesses), to where it connects them
   * @param destinations what no policy opens
   * @param upstream the server-wide proxy every allowed connection goes through, unless its
   *     sandbox has its own {@code egressProxy} or it is to a witness; null for none
   */
  public EgressGateway(InetAddress bind, Map<String, InetSocketAddress> overrides, Destinations destinations,
      @Nullable UpstreamProxy upstream) throws IOException {
    this.bind = bind;
    this.destinations = destinations;
    this.upstream = upstream;
    this.server = new ServerSocket(0, 200, bind);
    this.overrides = new ConcurrentHashMap<>(overrides);
    listen(server);
  }

  private void listen(ServerSocket socket) {
    listeners.put(socket.getLocalPort(), socket);
    Thread.ofVirtual().name("sandboxes-egress-gateway-" + socket.getLocalPort()).start(() -> accept(socket));
  }

  /** Where new sandboxes are told the gateway is. */
  public InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  /** @return every port the gateway listens on, {@link #address()}'s first */
  public java.util.List<Integer> ports() {
    java.util.List<Integer> ports = new java.util.ArrayList<>();
    ports.add(server.getLocalPort());
    listeners.keySet().stream().filter(p -> p != server.getLocalPort()).sorted().forEach(ports::add);
    return ports;
  }

  /**
   * Listens on {@code port} as well, where sandboxes an earlier server made were told the gateway
   * is (their processes keep the address they were started with). Best effort: the port may have
   * been taken meanwhile (by another server's gateway, say), and then those processes' proxy
   * connections fail as they would without a gateway; new processes are told the new port.
   *
   * @return whether the gateway now listens on it
   */
  public synchronized boolean listenAlso(int port) {
    if (closed || port <= 0 || port > 65535) {
      return false;
    }
    if (listeners.containsKey(port)) {
      return true;
    }
    try {
      listen(new ServerSocket(port, 200, bind));
      StructuredLog.atInfo(LOG).addKeyValue("event", "egress.port_kept").addKeyValue("port", port)
          .log("egress gateway also listens where an earlier server's sandboxes were told it is");
      return true;
    } catch (IOException e) {
      StructuredLog.atInfo(LOG).addKeyValue("event", "egress.port_lost").addKeyValue("port", port).addKeyValue("error", e.toString())
          .log("an earlier server's gateway port is taken: processes started before the restart lose their proxy");
      return false;
    }
  }

  /** For tests: the gateway answers {@code name} with {@code address}, as it does a witness's name. */
  void answer(String name, InetSocketAddress address) {
    overrides.put(name.toLowerCase(java.util.Locale.ROOT), address);
  }

  /** From now on, destinations with header rules are served by {@code interception}. */
  public void intercept(RuleInterception interception) {
    this.interception = interception;
  }

  /** Sandbox at {@code ip} is governed by the policy the supplier gives at connection time. */
  public void register(String ip, Function<String, EgressPolicy> policy) {
    bySourceIp.put(ip, policy);
  }

  public void unregister(String ip) {
    bySourceIp.remove(ip);
    openBySource.remove(ip);
  }

  private void accept(ServerSocket socket) {
    while (!closed) {
      try {
        Socket client = socket.accept();
        Thread.ofVirtual().name("sandboxes-egress-conn").start(() -> serve(client));
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("egress gateway accept failed: {}", e.toString());
        }
      }
    }
  }

  private void serve(Socket client) {
    String source = client.getInetAddress().getHostAddress();
    Function<String, EgressPolicy> policy = bySourceIp.get(source);
    if (policy == null) {
      close(client); // not a sandbox this server knows: nothing is read from it
      return;
    }
    AtomicInteger open = openBySource.computeIfAbsent(source, k -> new AtomicInteger());
    if (open.incrementAndGet() > MAX_CONNECTIONS_PER_SANDBOX) {
      open.decrementAndGet();
      StructuredLog.atDebug(LOG).addKeyValue("event", "egress.too_many").addKeyValue("source", source)
          .log("egress refused: the sandbox has as many gateway connections open as it may");
      answer(client, 429, "Too many gateway connections from this sandbox",
          "This sandbox holds " + MAX_CONNECTIONS_PER_SANDBOX + " connections through the egress gateway, as many as it may: "
              + "close some before opening more.");
      return;
    }
    try (client) {
      client.setSoTimeout(HEAD_TIMEOUT_MILLIS);
      InputStream in = client.getInputStream();
      byte[] head = readHead(in);
      if (head == null) {
        return;
      }
      String text = new String(head, StandardCharsets.ISO_8859_1);
      String requestLine = text.substring(0, text.indexOf("\r\n"));
      String[] parts = requestLine.split(" ");
      if (parts.length != 3) {
        return;
      }
      boolean connect = parts[0].equalsIgnoreCase("CONNECT");
      String host;
      int port;
      String forwardedHead = null;
      if (connect) {
        int colon = parts[1].lastIndexOf(':');
        host = colon < 0 ? parts[1] : parts[1].substring(0, colon);
        port = colon < 0 ? 443 : Integer.parseInt(parts[1].substring(colon + 1));
      } else {
        URI uri = URI.create(parts[1]);
        if (uri.getHost() == null) {
          return;
        }
        host = uri.getHost();
        port = uri.getPort() < 0 ? 80 : uri.getPort();
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (uri.getRawQuery() != null) {
          path += "?" + uri.getRawQuery();
        }
        forwardedHead = parts[0] + " " + path + " " + parts[2] + text.substring(text.indexOf("\r\n"));
      }
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      if (port < 1 || port > 65535) {
        return;
      }
      EgressPolicy rules = policy.apply(host);
      Decision decision = decide(rules, host, port, source);
      if (decision.targets().isEmpty()) {
        refuse(client, host, port, decision.reason(), rules);
        return;
      }
      Socket upstream = dial(rules, host, port, decision.targets(), source);
      if (upstream == null) {
        return; // an allowed destination that does not answer: the client sees its connection closed
      }
      try (upstream) {
        Map<String, String> headers = rules.rules().headersFor(host);
        RuleInterception rewriter = interception;
        if (headers != null && rewriter != null) {
          // a destination with header rules: its TLS is terminated here and its requests rewritten
          rewriter.serve(client, in, upstream, host, port, forwardedHead, headers, source);
          return;
        }
        upstream.setSoTimeout(0);
        client.setSoTimeout(0);
        OutputStream toClient = client.getOutputStream();
        OutputStream toUpstream = upstream.getOutputStream();
        if (connect) {
          toClient.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
          toClient.flush();
        } else {
          toUpstream.write(forwardedHead.getBytes(StandardCharsets.ISO_8859_1));
          toUpstream.flush();
        }
        Thread up = Thread.ofVirtual().start(() -> pipe(in, toUpstream, upstream));
        pipe(upstream.getInputStream(), toClient, client);
        up.join(5_000);
      }
    } catch (IOException | RuntimeException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      LOG.debug("egress connection ended: {}", e.toString());
    } finally {
      open.decrementAndGet();
    }
  }

  /** Where a request may go, or why it may not. */
  record Decision(List<InetSocketAddress> targets, String reason) {}

  /** @return the allowed addresses for {@code host:port}, as {@link #decide} finds them; empty when refused */
  List<InetSocketAddress> targets(EgressPolicy policy, String host, int port, String source) {
    return decide(policy, host, port, source).targets();
  }

  /**
   * Where a request for {@code host:port} may go: the witness a name stands for, or the addresses
   * the name resolves to (or the literal address) that the policy allows and that are none of
   * what no policy opens. Resolved once, here: the connection goes to exactly these addresses,
   * so a name cannot answer differently between the check and the connect. A name the policy
   * does not allow is not looked up at all.
   *
   * @return the allowed addresses, in the resolver's order (empty when refused), and else why not
   */
  Decision decide(EgressPolicy policy, String host, int port, String source) {
    String name = host.toLowerCase(java.util.Locale.ROOT);
    InetSocketAddress witness = overrides.getOrDefault(name + ":" + port, overrides.get(name));
    if (witness != null) {
      return policy.mayResolve(name) ? new Decision(List.of(witness), "") : refused(source, host, port, "not on its allow-list");
    }
    InetAddress literal = literal(host);
    List<InetAddress> candidates;
    if (literal != null) {
      candidates = List.of(literal);
    } else if (!policy.mayResolve(name)) {
      return refused(source, host, port, "not on its allow-list");
    } else {
      try {
        candidates = List.of(InetAddress.getAllByName(name));
      } catch (UnknownHostException e) {
        return refused(source, host, port, "the name does not resolve");
      }
    }
    boolean byName = literal == null && policy.allowsName(name);
    List<InetSocketAddress> allowed = new ArrayList<>();
    String why = null;
    for (InetAddress a : candidates) {
      String refusal = destinations.refusal(a, policy, byName);
      if (refusal == null) {
        allowed.add(new InetSocketAddress(a, port));
      } else if (why == null) {
        why = (literal == null ? "it resolves to " + a.getHostAddress() + ", " : "it is ") + refusal;
      }
    }
    return allowed.isEmpty() ? refused(source, host, port, why == null ? "no address" : why) : new Decision(allowed, "");
  }

  /** An IP literal (dotted IPv4, or IPv6 with colons) as its address, never looked up; null for a name. */
  private static @Nullable InetAddress literal(String host) {
    if (host.indexOf(':') >= 0) {
      try {
        return InetAddress.getByName(host.startsWith("[") ? host : "[" + host + "]");
      } catch (UnknownHostException e) {
        return null;
      }
    }
    return Destinations.v4(host);
  }

  private static Decision refused(String source, String host, int port, String why) {
    StructuredLog.atDebug(LOG).addKeyValue("event", "egress.refused").addKeyValue("source", source).addKeyValue("host", host)
        .addKeyValue("port", port).addKeyValue("reason", why).log("egress refused");
    return new Decision(List.of(), why);
  }

  /**
   * Tells the sandbox, in words a person and a model both read, that its policy refused the
   * destination: 403, with the refusal in the status line (what most clients print, {@code pip}'s
   * "Tunnel connection failed" among them), in a {@code Proxy-Status} header (RFC 9209) that
   * marks the answer as the gateway's, never the destination's, and in the body with what the
   * policy does allow.
   */
  private static void refuse(Socket client, String host, int port, String why, EgressPolicy policy) {
    String allows = policy.internetAccess()
        ? "internet access, less " + (policy.denyOut().isEmpty() ? "nothing" : String.join(", ", policy.denyOut())) + " (the host, "
            + "its private networks and other sandboxes are never reachable)"
        : policy.allowOut().isEmpty() ? "nothing: its network is closed" : "only " + String.join(", ", policy.allowOut());
    answer(client, 403, "Egress to " + host + ":" + port + " refused by the sandbox network policy",
        "The sandbox's network policy refused " + host + ":" + port + ": " + why + ".\n"
            + "It allows " + allows + ".\n"
            + "This is a policy decision, not a network fault: retrying will not help. The sandbox's owner can change the "
            + "policy (allowOut, allow_internet_access) at create or with PUT /sandboxes/{id}/network.");
  }

  private static void answer(Socket client, int status, String reason, String body) {
    try (client) {
      byte[] text = (body + "\n").getBytes(StandardCharsets.UTF_8);
      String head = "HTTP/1.1 " + status + " " + reason.replaceAll("[\\r\\n]", " ") + "\r\n"
          + "Proxy-Status: sandboxes-egress; error=" + (status == 403 ? "destination_ip_prohibited" : "connection_limit_reached")
          + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + text.length + "\r\nConnection: close\r\n\r\n";
      OutputStream out = client.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.write(text);
      out.flush();
    } catch (IOException e) {
      LOG.debug("the refusal could not be sent: {}", e.toString());
    }
  }

  /**
   * Connects to an allowed destination: through the sandbox's own {@code egressProxy} (at an
   * address {@link Destinations#proxyRefusal} lets the gateway reach), else through the
   * server-wide upstream proxy (not for a witness, which is this server's own), else directly.
   *
   * @return the connection, or null when the destination (or the proxy) cannot be reached
   */
  private @Nullable Socket dial(EgressPolicy rules, String host, int port, List<InetSocketAddress> targets, String source) {
    UpstreamProxy own = rules.proxy();
    String name = host.toLowerCase(java.util.Locale.ROOT);
    boolean witness = overrides.containsKey(name + ":" + port) || overrides.containsKey(name);
    Dialer dialer = own != null ? new ProxyDialer(own, a -> destinations.proxyRefusal(a, rules))
        : upstream == null || witness ? Dialer.DIRECT : new ProxyDialer(upstream, a -> null);
    try {
      return dialer.dial(literal(host) == null ? host : null, port, targets);
    } catch (IOException e) {
      StructuredLog.atDebug(LOG).addKeyValue("event", "egress.unreachable").addKeyValue("source", source).addKeyValue("host", host)
          .addKeyValue("port", port).addKeyValue("error", e.getMessage()).log("egress destination not reached");
      return null;
    }
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  /** Copies {@code from} to {@code to} until either side closes, then ends what {@code closeWriteOf} sends. */
  static void pipe(InputStream from, OutputStream to, Socket closeWriteOf) {
    byte[] buf = new byte[64 * 1024];
    try {
      int n;
      while ((n = from.read(buf)) >= 0) {
        to.write(buf, 0, n);
        to.flush();
      }
    } catch (IOException ignored) {
      // either side closed
    } finally {
      try {
        if (closeWriteOf instanceof javax.net.ssl.SSLSocket) {
          closeWriteOf.close(); // TLS has no half-close: the other direction ends with it
        } else {
          closeWriteOf.shutdownOutput();
        }
      } catch (IOException ignored) {
        // already closed
      }
    }
  }

  /** A request's head, up to and with its blank line; null when it is longer than {@value #MAX_HEADER} bytes or ends first. */
  static byte @Nullable [] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    try {
      int b;
      while ((b = in.read()) >= 0) {
        head.write(b);
        matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        if (matched == 4) {
          return head.toByteArray();
        }
        if (head.size() > MAX_HEADER) {
          return null;
        }
      }
    } catch (SocketTimeoutException e) {
      return null;
    }
    return null;
  }

  @Override
  public synchronized void close() {
    closed = true;
    for (ServerSocket socket : listeners.values()) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }
}
