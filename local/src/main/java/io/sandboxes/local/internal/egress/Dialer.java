package io.sandboxes.local.internal.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How the egress gateway reaches a destination its policy check allowed: directly (to the very
 * addresses checked), or through a proxy ({@link ProxyDialer}). The policy decides before a
 * dialer is asked; a dialer never widens what was decided.
 */
interface Dialer {
  /** How long a connect may take, to a destination or to a proxy. */
  int CONNECT_TIMEOUT_MILLIS = 8_000;

  /**
   * @param name the name the sandbox asked for, or null when it asked for an address
   * @param port the destination's port
   * @param targets the addresses allowed for it, in the resolver's order (for a name the gateway
   *     answers itself, its witness)
   * @return a connected socket whose bytes reach the destination
   * @throws IOException when it cannot be reached (the message never holds a proxy's password)
   */
  Socket dial(@Nullable String name, int port, List<InetSocketAddress> targets) throws IOException;

  /** Straight to the first of the checked addresses that answers. */
  Dialer DIRECT = (name, port, targets) -> {
    IOException last = null;
    for (InetSocketAddress target : targets) {
      Socket socket = new Socket();
      try {
        socket.connect(target, CONNECT_TIMEOUT_MILLIS);
        return socket;
      } catch (IOException e) {
        last = e;
        try {
          socket.close();
        } catch (IOException ignored) {
          // never connected
        }
      }
    }
    throw last != null ? last : new IOException("no address to connect to");
  };
}
