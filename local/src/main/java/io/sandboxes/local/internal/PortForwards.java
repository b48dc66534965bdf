package io.sandboxes.local.internal;

import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.PortStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's ports, reached from this machine: for each port asked for, a listener on the
 * server's own address, and for each connection to it, a TCP connection that the sandbox's daemon
 * makes to that port on the sandbox's loopback, relayed over the daemon's connection (credit-
 * controlled both ways, each way half-closed on its own). Like {@code kubectl port-forward}: the
 * sandbox needs no network and gains no route out, and the template needs nothing for it (no
 * python, no shell). Listeners end with the sandbox or the server.
 */
public final class PortForwards implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PortForwards.class);
  private static final int BUFFER = 64 * 1024;

  private final LocalSandbox sandbox;
  private final ConcurrentMap<Integer, ServerSocket> listeners = new ConcurrentHashMap<>();
  private volatile boolean closed;

  PortForwards(LocalSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /**
   * The address at which {@code port} inside the sandbox is reached, listening from now on; the
   * same address for every call with the same port.
   *
   * @param bindHost the address to listen on (the server's own)
   */
  public URI forward(int port, String bindHost) throws IOException {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    ServerSocket listener;
    try {
      listener = listeners.computeIfAbsent(port, p -> open(p, bindHost));
    } catch (java.io.UncheckedIOException e) {
      throw e.getCause();
    }
    if (closed) {
      close();
      throw new IOException("sandbox " + sandbox.id() + " is gone");
    }
    InetAddress bound = listener.getInetAddress();
    // a server bound to every address is still reached on loopback from this machine
    String host = bound.isAnyLocalAddress() ? "127.0.0.1" : bound.getHostAddress();
    return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + listener.getLocalPort());
  }

  private ServerSocket open(int port, String bindHost) {
    try {
      ServerSocket listener = new ServerSocket();
      listener.bind(new InetSocketAddress(InetAddress.getByName(bindHost), 0));
      Thread.ofVirtual().name("sandboxes-forward-" + sandbox.id() + "-" + port).start(() -> accept(listener, port));
      StructuredLog.atInfo(LOG).addKeyValue("event", "port.forwarded").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
          .addKeyValue("listen", listener.getLocalPort()).log("sandbox port forwarded");
      return listener;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void accept(ServerSocket listener, int port) {
    while (!listener.isClosed()) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed with the sandbox or the server
      }
      Thread.ofVirtual().name("sandboxes-relay-" + sandbox.id() + "-" + port).start(() -> relay(client, port));
    }
  }

  private void relay(Socket client, int port) {
    try (client) {
      if (sandbox.paused()) {
        return; // closed unanswered: forwarded traffic does not resume a sandbox
      }
      PortStream remote;
      try {
        remote = sandbox.daemon().connectPort(port);
      } catch (DaemonException e) {
        // nothing listening there (or no daemon): worth saying where someone will look
        StructuredLog.atInfo(LOG).addKeyValue("event", "port.unreachable").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
            .addKeyValue("reason", e.getMessage()).log("a forwarded connection could not reach the sandbox's port");
        return;
      }
      try (remote) {
        client.setTcpNoDelay(true);
        Thread up = Thread.ofVirtual().name("sandboxes-relay-up-" + sandbox.id() + "-" + port).start(() -> {
          try {
            // not closed here: closing a socket's stream closes the socket, and the answer may still be coming
            InputStream in = client.getInputStream();
            byte[] buf = new byte[BUFFER];
            int n;
            while ((n = in.read(buf)) > 0) {
              remote.write(buf, 0, n);
            }
            remote.shutdownOutput();
          } catch (IOException e) {
            remote.close(); // the client reset, or the stream failed: the connection inside ends too
          }
        });
        try {
          OutputStream out = client.getOutputStream();
          byte[] chunk;
          while ((chunk = remote.read()) != null) {
            out.write(chunk);
          }
          client.shutdownOutput();
          remote.awaitEnd(); // until the client has closed its side too
        } catch (DaemonException e) {
          // reset inside the sandbox, or the sandbox is gone: the client sees a reset, not a clean end
          LOG.debug("relay to port {} of sandbox {} failed: {}", port, sandbox.id(), e.getMessage());
          client.setSoLinger(true, 0);
        }
        up.interrupt();
      }
    } catch (IOException | RpcError | RuntimeException e) {
      LOG.debug("relay to port {} of sandbox {} failed: {}", port, sandbox.id(), e.toString());
    }
  }

  /** Stops listening on every port; connections already relayed end with their sandbox. */
  @Override
  public void close() {
    closed = true;
    for (ServerSocket listener : List.copyOf(listeners.values())) {
      try {
        listener.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    listeners.clear();
  }
}
