package io.sandboxes.local.internal;

import io.sandboxes.local.internal.docker.RawExec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's ports, reached from this machine: for each port asked for, a listener on the
 * server's own address, and for each connection to it, a small relay run inside the sandbox
 * that connects to that port on the sandbox's loopback. Like {@code kubectl port-forward}: the
 * sandbox needs no network and gains no route out, since every byte travels over the Docker
 * exec stream. Listeners end with the sandbox or the server.
 */
public final class PortForwards implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PortForwards.class);

  /**
   * The relay: connect to the port (every address of localhost, IPv4 and IPv6), copy stdin to it
   * and it to stdout; stdin's end half-closes the connection.
   */
  private static final String RELAY = """
      import os, socket, sys, threading
      s = socket.create_connection(("localhost", int(sys.argv[1])))
      def up():
          try:
              while True:
                  b = os.read(0, 65536)
                  if not b:
                      break
                  s.sendall(b)
          except OSError:
              pass
          try:
              s.shutdown(socket.SHUT_WR)
          except OSError:
              pass
      threading.Thread(target=up, daemon=True).start()
      while True:
          b = s.recv(65536)
          if not b:
              break
          while b:
              b = b[os.write(1, b):]
      """;

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
      LOG.atInfo().addKeyValue("event", "port.forwarded").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
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
    try (client; RawExec exec = sandbox.attach("root", List.of("python3", "-c", RELAY, Integer.toString(port)))) {
      Thread up = Thread.ofVirtual().start(() -> {
        try {
          // not closed here: closing a socket's stream closes the socket, and the answer is still coming
          InputStream in = client.getInputStream();
          byte[] buf = new byte[64 * 1024];
          int n;
          while ((n = in.read(buf)) > 0) {
            exec.write(Arrays.copyOf(buf, n));
          }
        } catch (IOException ignored) {
          // the connection or the relay ended; the other direction sees it too
        } finally {
          try {
            exec.closeStdin();
          } catch (IOException ignored) {
            // the relay is gone already
          }
        }
      });
      OutputStream out = client.getOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      RawExec.Frame frame;
      long relayed = 0;
      while ((frame = exec.read()) != null) {
        if (frame.stream() == RawExec.Stream.STDERR) {
          if (err.size() < 4096) {
            err.write(frame.data());
          }
        } else {
          out.write(frame.data());
          relayed += frame.data().length;
        }
      }
      if (err.size() > 0) {
        String why = err.toString(StandardCharsets.UTF_8).strip();
        why = why.substring(why.lastIndexOf('\n') + 1);
        if (relayed == 0) {
          // nothing listening, or no python3 in the template: worth saying where someone will look
          LOG.atInfo().addKeyValue("event", "port.unreachable").addKeyValue("sandbox", sandbox.id()).addKeyValue("port", port)
              .addKeyValue("reason", why).log("a forwarded connection could not reach the sandbox's port");
        } else {
          LOG.debug("relay to port {} of sandbox {} ended: {}", port, sandbox.id(), why);
        }
      }
      client.shutdownOutput();
      up.interrupt();
    } catch (IOException | RpcError e) {
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
