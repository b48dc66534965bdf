package io.sandboxes.local.internal.egress;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A proxy the egress gateway dials destinations through: a sandbox's own {@code egressProxy}
 * (SOCKS5, as E2B has it) or the server-wide upstream proxy ({@code --upstream-proxy}, SOCKS5 or
 * HTTP {@code CONNECT}). {@link #toString()} never shows the password.
 *
 * @param kind how it is spoken to
 * @param host its name or IP literal (an IPv6 literal without brackets)
 * @param port its port
 * @param username the user name (RFC 1929 for SOCKS5, Basic for HTTP), or null
 * @param password the password, or null
 * @param remoteNames whether a destination asked for by name is handed to the proxy by name (it
 *     resolves it, E2B's "remote DNS"), not as the address the gateway resolved and checked
 */
public record UpstreamProxy(Kind kind, String host, int port, @Nullable String username, @Nullable String password,
    boolean remoteNames) {

  /** How a proxy is spoken to. */
  public enum Kind {
    /** SOCKS5 (RFC 1928), with username/password authentication (RFC 1929) when a user name is given. */
    SOCKS5,
    /** An HTTP proxy's {@code CONNECT} tunnel, with {@code Proxy-Authorization: Basic} when a user name is given. */
    HTTP
  }

  /** Validates the parts. */
  public UpstreamProxy {
    if (host.isEmpty() || host.chars().anyMatch(c -> c <= ' ' || c == 0x7f || c == '/' || c == '@')) {
      throw new IllegalArgumentException("a proxy's host must be a name or an IP literal, got '" + host + "'");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("a proxy's port must be 1 to 65535, got " + port);
    }
    if (username != null && (username.isEmpty() || username.getBytes(StandardCharsets.UTF_8).length > 255)) {
      throw new IllegalArgumentException("a proxy's user name must be 1 to 255 bytes");
    }
    if (password != null && (username == null || password.getBytes(StandardCharsets.UTF_8).length > 255)) {
      throw new IllegalArgumentException("a proxy's password must come with a user name and be at most 255 bytes");
    }
  }

  /**
   * E2B's {@code egressProxy}: a SOCKS5 proxy at {@code host:port} ({@code [v6]:port} for an IPv6
   * literal), handed names as names.
   *
   * @throws IllegalArgumentException naming what is wrong (never the password)
   */
  public static UpstreamProxy socks5(String address, @Nullable String username, @Nullable String password) {
    int colon = address.lastIndexOf(':');
    if (colon < 1 || !address.substring(colon + 1).matches("\\d{1,5}")) {
      throw new IllegalArgumentException("'egressProxy.address' must be host:port, got '" + address + "'");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.indexOf(':') >= 0) {
      throw new IllegalArgumentException("'egressProxy.address' must put an IPv6 literal in brackets ([::1]:1080), got '" + address + "'");
    }
    return new UpstreamProxy(Kind.SOCKS5, host, Integer.parseInt(address.substring(colon + 1)), username, password, true);
  }

  /**
   * The server-wide proxy as a URL: {@code socks5://}, {@code socks5h://}, {@code http://}, with
   * {@code user:password@} when it needs credentials (percent-encoded). {@code socks5://} is handed
   * the address the gateway resolved, as curl does; {@code socks5h://} and {@code http://} are
   * handed names.
   *
   * @throws IllegalArgumentException naming what is wrong (never the password)
   */
  public static UpstreamProxy parse(String url) {
    URI uri;
    try {
      uri = new URI(url.strip());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("the upstream proxy must be a URL such as socks5h://proxy:1080 or http://proxy:3128");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    Kind kind = switch (scheme) {
      case "socks5", "socks5h" -> Kind.SOCKS5;
      case "http" -> Kind.HTTP;
      default -> throw new IllegalArgumentException("the upstream proxy's scheme must be socks5, socks5h or http, got '" + scheme
          + "' (an https:// proxy, TLS to the proxy itself, is not supported)");
    };
    if (uri.getHost() == null || (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/"))
        || uri.getRawQuery() != null) {
      throw new IllegalArgumentException("the upstream proxy must be scheme://[user:password@]host:port, nothing more");
    }
    int port = uri.getPort() > 0 ? uri.getPort() : kind == Kind.HTTP ? 3128 : 1080;
    String user = null;
    String pass = null;
    if (uri.getRawUserInfo() != null) {
      String info = uri.getRawUserInfo();
      int colon = info.indexOf(':');
      user = URLDecoder.decode(colon < 0 ? info : info.substring(0, colon), StandardCharsets.UTF_8);
      pass = colon < 0 ? null : URLDecoder.decode(info.substring(colon + 1), StandardCharsets.UTF_8);
    }
    String host = uri.getHost();
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new UpstreamProxy(kind, host, port, user, pass, !scheme.equals("socks5"));
  }

  /** @return {@code host:port}, an IPv6 literal in brackets */
  public String address() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The kind, address and user name; never the password. */
  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT) + " proxy " + address() + (username == null ? "" : " as " + username);
  }
}
