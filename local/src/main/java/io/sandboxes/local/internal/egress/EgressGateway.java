package io.sandboxes.local.internal.egress;

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
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress gateway: a forwarding HTTP proxy ({@code CONNECT} for TLS, absolute-URI requests for
 * plain HTTP) on the sandbox network's gateway address. It knows each sandbox by its address on
 * that network and lets a connection through only when that sandbox's policy allows the
 * destination by name or address. A refused connection is closed without an answer, so a client
 * sees a failed connection, never a reply it could mistake for the destination's.
 */
public final class EgressGateway implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EgressGateway.class);
  private static final int MAX_HEADER = 64 * 1024;

  private final ServerSocket server;
  private final ConcurrentMap<String, Function<String, EgressPolicy>> bySourceIp = new ConcurrentHashMap<>();
  private final Map<String, InetSocketAddress> overrides;
  private final Thread acceptor;
  private volatile boolean closed;

  /**
   * @param bind the address to listen on (the sandbox network's gateway)
   * @param overrides names the gateway answers itself (witnesses), to where it connects them
   */
  public EgressGateway(InetAddress bind, Map<String, InetSocketAddress> overrides) throws IOException {
    this.server = new ServerSocket(0, 200, bind);
    this.overrides = Map.copyOf(overrides);
    this.acceptor = Thread.ofVirtual().name("sandboxes-egress-gateway").start(this::accept);
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  /** Sandbox at {@code ip} is governed by the policy the supplier gives at connection time. */
  public void register(String ip, Function<String, EgressPolicy> policy) {
    bySourceIp.put(ip, policy);
  }

  public void unregister(String ip) {
    bySourceIp.remove(ip);
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Thread.ofVirtual().name("sandboxes-egress-conn").start(() -> serve(client));
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("egress gateway accept failed: {}", e.toString());
        }
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      client.setSoTimeout(30_000);
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
      String source = client.getInetAddress().getHostAddress();
      Function<String, EgressPolicy> policy = bySourceIp.get(source);
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
      if (policy == null || !policy.apply(host).allows(host)) {
        LOG.atDebug().addKeyValue("event", "egress.refused").addKeyValue("source", source).addKeyValue("host", host)
            .addKeyValue("port", port).log("egress refused");
        return;
      }
      InetSocketAddress target = overrides.getOrDefault(host.toLowerCase(java.util.Locale.ROOT) + ":" + port,
          overrides.get(host.toLowerCase(java.util.Locale.ROOT)));
      if (target == null) {
        target = new InetSocketAddress(host, port);
      }
      try (Socket upstream = new Socket()) {
        upstream.connect(target, 8_000);
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
      } catch (IOException unreachable) {
        // an allowed destination that does not answer: the client sees its connection closed
      }
    } catch (IOException | RuntimeException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      LOG.debug("egress connection ended: {}", e.toString());
    }
  }

  private static void pipe(InputStream from, OutputStream to, Socket closeWriteOf) {
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
        closeWriteOf.shutdownOutput();
      } catch (IOException ignored) {
        // already closed
      }
    }
  }

  private static byte @Nullable [] readHead(InputStream in) throws IOException {
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
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing
    }
    acceptor.interrupt();
  }
}
