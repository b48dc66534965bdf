package io.sandboxes;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A SOCKS5 proxy a sandbox's egress is tunneled through, as E2B's {@code network.egressProxy}
 * ({@link SandboxNetwork#withEgressProxy(EgressProxy)}). E2B's cloud and the local runtime serve
 * it (the local one refuses a proxy on its host or a private address the sandbox's allow-list does
 * not name). Read back from a sandbox's record it has no password: the server never returns one.
 * {@link #toString()} never shows the password.
 *
 * @param address the proxy as {@code host:port}, the host a name or an IP literal; it must be
 *     reachable from E2B's infrastructure (or the local server's host)
 * @param username the SOCKS5 user name, up to 255 bytes, or null for none
 * @param password the SOCKS5 password, up to 255 bytes, only with a user name; or null
 * @since 0.1
 */
public record EgressProxy(String address, @Nullable String username, @Nullable String password) {

  /** Validates the components. */
  public EgressProxy {
    Objects.requireNonNull(address, "address");
    int colon = address.lastIndexOf(':');
    String port = colon < 0 ? "" : address.substring(colon + 1);
    if (colon < 1 || !port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535
        || address.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
      throw new IllegalArgumentException("egressProxy address must be host:port, got '" + address + "'");
    }
    if (username != null && (username.isEmpty() || username.getBytes(StandardCharsets.UTF_8).length > 255)) {
      throw new IllegalArgumentException("egressProxy username must be 1 to 255 bytes");
    }
    if (password != null && username == null) {
      throw new IllegalArgumentException("an egressProxy password needs a username");
    }
    if (password != null && password.getBytes(StandardCharsets.UTF_8).length > 255) {
      throw new IllegalArgumentException("egressProxy password must be at most 255 bytes");
    }
  }

  /**
   * A proxy without credentials.
   *
   * @param address {@code host:port}
   * @return the proxy
   */
  public static EgressProxy of(String address) {
    return new EgressProxy(address, null, null);
  }

  /**
   * A proxy with SOCKS5 user name and password.
   *
   * @param address {@code host:port}
   * @param username the user name
   * @param password the password
   * @return the proxy
   */
  public static EgressProxy of(String address, String username, String password) {
    return new EgressProxy(address, Objects.requireNonNull(username, "username"), Objects.requireNonNull(password, "password"));
  }

  /** The address and user name; never the password. */
  @Override
  public String toString() {
    return "EgressProxy[address=" + address + ", username=" + username + (password == null ? "" : ", password hidden") + "]";
  }
}
