package io.sandboxes.local.internal.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A tiny HTTP server that answers every request with 200 and its own name: the live endpoints
 * egress verification probes, so that it observes something real without reaching the internet.
 */
public final class Witnesses {
  private Witnesses() {}

  /** One witness. */
  public static final class Witness implements AutoCloseable {
    private final ServerSocket socket;
    private final String name;
    private final AtomicBoolean closed = new AtomicBoolean();

    Witness(InetAddress bind, String name) throws IOException {
      this.socket = new ServerSocket(0, 50, bind);
      this.name = name;
      Thread.ofVirtual().name("sandboxes-witness-" + name).start(this::serve);
    }

    public InetSocketAddress address() {
      return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    private void serve() {
      while (!closed.get()) {
        try {
          Socket s = socket.accept();
          Thread.ofVirtual().start(() -> answer(s));
        } catch (IOException e) {
          return;
        }
      }
    }

    private void answer(Socket s) {
      try (s) {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
          matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
          if (matched == 4) {
            break;
          }
        }
        byte[] body = ("witness " + name + "\n").getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + body.length
            + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
      } catch (IOException ignored) {
        // the prober went away
      }
    }

    /** Stops answering: connections to it are refused from now on. */
    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        try {
          socket.close();
        } catch (IOException ignored) {
          // closing
        }
      }
    }
  }

  public static Witness start(InetAddress bind, String name) throws IOException {
    return new Witness(bind, name);
  }
}
