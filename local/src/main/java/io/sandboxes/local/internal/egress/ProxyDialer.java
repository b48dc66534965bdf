package io.sandboxes.local.internal.egress;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Dials through a proxy: SOCKS5 (RFC 1928, with RFC 1929 username/password when the proxy has a
 * user name) or an HTTP proxy's {@code CONNECT}. The JDK's own SOCKS support takes credentials
 * only from the process-wide {@link java.net.Authenticator}, which cannot hold one proxy's per
 * sandbox, so the handshakes are spoken here.
 *
 * <p>The proxy's name is resolved at each dial and every address it gives is checked before it is
 * connected to (a name cannot answer differently between the check and the connect). A
 * destination asked for by name is handed over by name when the proxy resolves names
 * ({@link UpstreamProxy#remoteNames()}); otherwise, and for an address, the checked addresses are
 * handed over in turn. Fails closed: a proxy that cannot be reached, refuses the credentials or
 * the destination, is an error, never a direct connection.
 */
final class ProxyDialer implements Dialer {
  private static final int HANDSHAKE_TIMEOUT_MILLIS = 15_000;
  private static final int MAX_HTTP_HEAD = 16 * 1024;

  private final UpstreamProxy proxy;
  private final Function<InetAddress, @Nullable String> refusal;

  /**
   * @param refusal why the gateway may not connect to one of the proxy's addresses, or null when it may
   */
  ProxyDialer(UpstreamProxy proxy, Function<InetAddress, @Nullable String> refusal) {
    this.proxy = proxy;
    this.refusal = refusal;
  }

  @Override
  public Socket dial(@Nullable String name, int port, List<InetSocketAddress> targets) throws IOException {
    if (name != null && proxy.remoteNames()) {
      return tunnel(name, port);
    }
    IOException last = null;
    for (InetSocketAddress target : targets) {
      try {
        return tunnel(target.getAddress().getHostAddress(), port);
      } catch (IOException e) {
        last = e;
      }
    }
    throw last != null ? last : new IOException("no address to hand the " + proxy + " to");
  }

  /** A connection to the proxy, tunneled on to {@code host:port}. */
  private Socket tunnel(String host, int port) throws IOException {
    Socket socket = connectToProxy();
    try {
      socket.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
      if (proxy.kind() == UpstreamProxy.Kind.SOCKS5) {
        socks5(socket, host, port);
      } else {
        httpConnect(socket, host, port);
      }
      socket.setSoTimeout(0);
      return socket;
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  private Socket connectToProxy() throws IOException {
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(proxy.host());
    } catch (UnknownHostException e) {
      throw new IOException("the " + proxy + " does not resolve");
    }
    IOException last = null;
    for (InetAddress a : addresses) {
      String why = refusal.apply(a);
      if (why != null) {
        last = new IOException("the " + proxy + " is at " + a.getHostAddress() + ", " + why);
        continue;
      }
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(a, proxy.port()), CONNECT_TIMEOUT_MILLIS);
        return socket;
      } catch (IOException e) {
        socket.close();
        last = new IOException("the " + proxy + " does not answer at " + a.getHostAddress() + ": " + e.getMessage());
      }
    }
    throw last != null ? last : new IOException("the " + proxy + " has no address");
  }

  private void socks5(Socket socket, String host, int port) throws IOException {
    OutputStream out = socket.getOutputStream();
    DataInputStream in = new DataInputStream(socket.getInputStream());
    boolean auth = proxy.username() != null;
    out.write(new byte[] {5, 1, (byte) (auth ? 2 : 0)});
    out.flush();
    if (in.readUnsignedByte() != 5) {
      throw new IOException("the " + proxy + " does not speak SOCKS5");
    }
    int method = in.readUnsignedByte();
    if (method != (auth ? 2 : 0)) {
      throw new IOException("the " + proxy + " accepts no " + (auth ? "username/password" : "unauthenticated") + " connection");
    }
    if (auth) {
      byte[] user = proxy.username().getBytes(StandardCharsets.UTF_8);
      byte[] pass = proxy.password() == null ? new byte[0] : proxy.password().getBytes(StandardCharsets.UTF_8);
      ByteArrayOutputStream m = new ByteArrayOutputStream();
      m.write(1);
      m.write(user.length);
      m.write(user);
      m.write(pass.length);
      m.write(pass);
      out.write(m.toByteArray());
      out.flush();
      in.readUnsignedByte(); // the subnegotiation's version
      if (in.readUnsignedByte() != 0) {
        throw new IOException("the " + proxy + " refused the credentials");
      }
    }
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    req.write(new byte[] {5, 1, 0});
    InetAddress literal = literal(host);
    if (literal != null) {
      req.write(literal instanceof Inet6Address ? 4 : 1);
      req.write(literal.getAddress());
    } else {
      byte[] n = host.getBytes(StandardCharsets.US_ASCII);
      if (n.length > 255) {
        throw new IOException("a name longer than 255 bytes cannot be handed to a SOCKS5 proxy");
      }
      req.write(3);
      req.write(n.length);
      req.write(n);
    }
    req.write(port >>> 8);
    req.write(port & 0xff);
    out.write(req.toByteArray());
    out.flush();
    if (in.readUnsignedByte() != 5) {
      throw new IOException("the " + proxy + " answered the CONNECT with something other than SOCKS5");
    }
    int reply = in.readUnsignedByte();
    in.readUnsignedByte();
    int atyp = in.readUnsignedByte();
    int skip = switch (atyp) {
      case 1 -> 4;
      case 4 -> 16;
      case 3 -> in.readUnsignedByte();
      default -> throw new IOException("the " + proxy + " answered with an unknown address type " + atyp);
    };
    in.readFully(new byte[skip + 2]);
    if (reply != 0) {
      throw new IOException("the " + proxy + " refused " + host + ":" + port + ": " + socksReply(reply));
    }
  }

  private static String socksReply(int code) {
    return switch (code) {
      case 1 -> "general failure";
      case 2 -> "not allowed by its rules";
      case 3 -> "network unreachable";
      case 4 -> "host unreachable";
      case 5 -> "connection refused";
      case 6 -> "TTL expired";
      case 7 -> "command not supported";
      case 8 -> "address type not supported";
      default -> "reply " + code;
    };
  }

  private void httpConnect(Socket socket, String host, int port) throws IOException {
    String authority = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    StringBuilder head = new StringBuilder("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n");
    if (proxy.username() != null) {
      String pair = proxy.username() + ":" + (proxy.password() == null ? "" : proxy.password());
      head.append("Proxy-Authorization: Basic ")
          .append(Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8))).append("\r\n");
    }
    head.append("\r\n");
    OutputStream out = socket.getOutputStream();
    out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
    // read exactly the answer's head: what follows it is the destination's
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream answer = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0 || answer.size() > MAX_HTTP_HEAD) {
        throw new IOException("the " + proxy + " closed or overran its answer to CONNECT");
      }
      answer.write(b);
      matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    String status = answer.toString(StandardCharsets.ISO_8859_1).lines().findFirst().orElse("");
    String[] parts = status.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/") || !parts[1].startsWith("2")) {
      throw new IOException("the " + proxy + " refused CONNECT " + authority + ": " + status.replaceAll("[^\\x20-\\x7e]", "?"));
    }
  }

  /** An IP literal as its address, never looked up; null for a name. */
  private static @Nullable InetAddress literal(String host) {
    if (host.indexOf(':') >= 0) {
      try {
        return InetAddress.getByName("[" + host + "]");
      } catch (UnknownHostException e) {
        return null;
      }
    }
    return Destinations.v4(host);
  }
}
