package io.sandboxes.local.internal.docker;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A started {@code docker exec}, attached over a raw connection to the Docker API.
 *
 * <p>docker-java's own attach never half-closes the exec's stdin, so a process reading to EOF
 * ({@code cat}) would never finish. Here the start request is sent by hand with
 * {@code Connection: Upgrade}, and the hijacked connection gives a real duplex stream:
 * {@link #closeStdin()} shuts down the write side, which the daemon delivers as EOF. Without a
 * TTY the output is multiplexed in frames (stream byte, three zero bytes, big-endian length).
 */
public final class RawExec implements AutoCloseable {
  /** Which stream a chunk of output came from. */
  public enum Stream { STDOUT, STDERR, TTY }

  /** One chunk of output. */
  public record Frame(Stream stream, byte[] data) {}

  private final SocketChannel channel;
  private final InputStream in;
  private final OutputStream out;
  private final boolean tty;
  private final String execId;
  private volatile boolean stdinClosed;

  private RawExec(SocketChannel channel, boolean tty, String execId) {
    this.channel = channel;
    this.in = new ChannelIn(channel);
    this.out = new ChannelOut(channel);
    this.tty = tty;
    this.execId = execId;
  }

  public String execId() {
    return execId;
  }

  static RawExec start(DockerLocator.Found engine, String execId, boolean tty) throws IOException {
    SocketChannel ch = SocketChannel.open(address(engine.host()));
    try {
      byte[] body = ("{\"Detach\":false,\"Tty\":" + tty + "}").getBytes(StandardCharsets.US_ASCII);
      String head = "POST /v" + engine.apiVersion() + "/exec/" + execId + "/start HTTP/1.1\r\n"
          + "Host: docker\r\n"
          + "Content-Type: application/json\r\n"
          + "Connection: Upgrade\r\n"
          + "Upgrade: tcp\r\n"
          + "Content-Length: " + body.length + "\r\n\r\n";
      RawExec exec = new RawExec(ch, tty, execId);
      exec.out.write(head.getBytes(StandardCharsets.US_ASCII));
      exec.out.write(body);
      exec.out.flush();
      String status = exec.readHeaders();
      if (!status.contains(" 101 ") && !status.contains(" 200 ")) {
        throw new IOException("docker refused to start exec " + execId + ": " + status);
      }
      return exec;
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /**
   * POSTs a body of known length to the Docker API on a raw connection and returns the status
   * line and the response body. Used for {@code docker import}, whose upload docker-java's
   * transport truncates.
   */
  static String[] post(DockerLocator.Found engine, String pathAndQuery, String contentType, InputStream body, long length)
      throws IOException {
    try (SocketChannel ch = SocketChannel.open(address(engine.host()))) {
      RawExec conn = new RawExec(ch, true, "");
      String head = "POST /v" + engine.apiVersion() + pathAndQuery + " HTTP/1.1\r\n"
          + "Host: docker\r\n"
          + "Content-Type: " + contentType + "\r\n"
          + "Connection: close\r\n"
          + "Content-Length: " + length + "\r\n\r\n";
      conn.out.write(head.getBytes(StandardCharsets.US_ASCII));
      body.transferTo(conn.out);
      String status = conn.readHeaders();
      ByteArrayOutputStream rest = new ByteArrayOutputStream();
      conn.in.transferTo(rest);
      return new String[] {status, rest.toString(StandardCharsets.UTF_8)};
    }
  }

  /** Unix sockets and plain TCP (the locator refuses TLS and every other kind of address). */
  private static SocketAddress address(URI dockerHost) throws IOException {
    return switch (dockerHost.getScheme().toLowerCase(Locale.ROOT)) {
      case "unix" -> UnixDomainSocketAddress.of(dockerHost.getPath());
      case "tcp" -> new InetSocketAddress(dockerHost.getHost().replaceAll("^\\[|]$", ""), dockerHost.getPort());
      default -> throw new IOException("raw Docker calls need a unix:// or plain tcp:// Docker host, not " + dockerHost);
    };
  }

  private String readHeaders() throws IOException {
    String status = null;
    while (true) {
      String line = readLine();
      if (status == null) {
        status = line;
      } else if (line.isEmpty()) {
        return status;
      }
    }
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n') {
        String s = line.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      line.write(b);
    }
    throw new EOFException("docker closed the connection during the exec handshake");
  }

  /**
   * Reads the next chunk of output.
   *
   * @return the chunk, or null at the end of the output
   */
  public @Nullable Frame read() throws IOException {
    if (tty) {
      byte[] buf = new byte[16 * 1024];
      int n = in.read(buf);
      if (n < 0) {
        return null;
      }
      byte[] data = new byte[n];
      System.arraycopy(buf, 0, data, 0, n);
      return new Frame(Stream.TTY, data);
    }
    while (true) {
      int first = in.read();
      if (first < 0) {
        return null;
      }
      byte[] rest = in.readNBytes(7);
      if (rest.length < 7) {
        throw new EOFException("exec output ended inside a frame header");
      }
      int length = ByteBuffer.wrap(rest, 3, 4).getInt();
      byte[] data = in.readNBytes(length);
      if (data.length < length) {
        throw new EOFException("exec output ended inside a frame");
      }
      if (length == 0) {
        continue;
      }
      return new Frame(first == 2 ? Stream.STDERR : Stream.STDOUT, data);
    }
  }

  /** Writes to the process's stdin (or, with a TTY, its terminal). */
  public void write(byte[] data) throws IOException {
    if (stdinClosed) {
      throw new IOException("stdin is closed");
    }
    out.write(data);
    out.flush();
  }

  /** Sends EOF to the process's stdin. Idempotent. */
  public void closeStdin() throws IOException {
    if (!stdinClosed) {
      stdinClosed = true;
      channel.shutdownOutput();
    }
  }

  public boolean stdinClosed() {
    return stdinClosed;
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to release
    }
  }

  /** Reads straight from the channel: the JDK's channel streams lock reads against writes. */
  private static final class ChannelIn extends InputStream {
    private final SocketChannel ch;
    private final ByteBuffer buf = ByteBuffer.allocate(64 * 1024).flip();

    ChannelIn(SocketChannel ch) {
      this.ch = ch;
    }

    private boolean fill() throws IOException {
      if (buf.hasRemaining()) {
        return true;
      }
      buf.clear();
      int n;
      do {
        n = ch.read(buf);
      } while (n == 0);
      buf.flip();
      return n > 0;
    }

    @Override
    public int read() throws IOException {
      return fill() ? buf.get() & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      int n = Math.min(len, buf.remaining());
      buf.get(b, off, n);
      return n;
    }
  }

  private static final class ChannelOut extends OutputStream {
    private final SocketChannel ch;

    ChannelOut(SocketChannel ch) {
      this.ch = ch;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      ByteBuffer bb = ByteBuffer.wrap(b, off, len);
      while (bb.hasRemaining()) {
        ch.write(bb);
      }
    }
  }
}
