package io.sandboxes.local.internal.http;

import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.NetworkPolicy;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.PortStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpVersion;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays one HTTP request to a port inside a sandbox, as E2B's proxy does for a request whose
 * {@code E2b-Sandbox-Port} is not envd's: over a TCP stream the sandbox's daemon opens to that
 * port on the sandbox's loopback, with no listener on the host at all. The request goes as
 * HTTP/1.1 with {@code Connection: close}, its body streamed as it arrives; the answer is parsed
 * (Jetty's parser) and streamed back as it comes, so the code interpreter's line-per-event stream
 * arrives line by line. A client that goes away closes the stream into the sandbox, which is how
 * the code interpreter learns to interrupt its kernel. A GET asking to upgrade (a WebSocket's
 * handshake) goes with its {@code Upgrade} instead, and a {@code 101} answer hands the connection
 * to {@link PortUpgrade}.
 *
 * <p>Nothing is buffered whole: the request body and the answer pass in chunks, each direction
 * held to the stream's credit. What the sandbox sends is bounded where it is held: its status
 * line and headers ({@link #MAX_HEAD} bytes, {@link #MAX_HEADERS} of them passed on).
 */
final class SandboxPortProxy {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxPortProxy.class);
  /** The most response headers passed back, and the largest one. */
  static final int MAX_HEADERS = 64;
  static final int MAX_HEADER_BYTES = 8 * 1024;
  /** The largest status line and header block the sandbox's answer may have. */
  static final int MAX_HEAD = 64 * 1024;
  private static final int CHUNK = 64 * 1024;
  /** The header naming the sandbox's traffic token. */
  static final String TRAFFIC_TOKEN_HEADER = "e2b-traffic-access-token";
  /**
   * Hop-by-hop headers, the body's framing (set here), and the routing and credentials meant for
   * this server: never passed on, either way.
   */
  private static final Set<String> NOT_RELAYED = Set.of("connection", "keep-alive", "transfer-encoding", "te", "trailer",
      "upgrade", "proxy-authorization", "proxy-authenticate", "proxy-connection", "content-length", "expect", "http2-settings",
      "e2b-sandbox-id", "e2b-sandbox-port", "x-access-token", TRAFFIC_TOKEN_HEADER, "x-api-key");

  private SandboxPortProxy() {}

  /** Why a request to a sandbox's port is refused for its traffic token, or null when it may pass. */
  static @Nullable String trafficRefusal(Exchange ex, LocalSandbox sandbox) {
    String expected = sandbox.trafficAccessToken();
    if (expected == null) {
      return null; // public port traffic
    }
    String given = ex.header(TRAFFIC_TOKEN_HEADER);
    if (given == null || given.isEmpty()) {
      return "the sandbox's port traffic needs its traffic access token, and the " + TRAFFIC_TOKEN_HEADER + " header is missing";
    }
    if (!java.security.MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), expected.getBytes(StandardCharsets.UTF_8))) {
      return "the " + TRAFFIC_TOKEN_HEADER + " header does not hold the sandbox's traffic access token";
    }
    return null;
  }

  static void relay(Exchange ex, LocalSandbox sandbox, int port) throws IOException, RpcError {
    String upgrade = PortUpgrade.asked(ex);
    PortUpgrade.Slot slot = null;
    if (upgrade != null) {
      slot = PortUpgrade.Slot.take(sandbox.id());
      if (slot == null) {
        ex.json(429, Json.object().put("sandboxId", sandbox.id()).put("port", port).put("code", 429)
            .put("message", "The sandbox already has " + PortUpgrade.MAX_PER_SANDBOX + " upgraded (WebSocket) connections open or"
                + " opening through the port proxy, the most it may: close one first"));
        return;
      }
    }
    boolean handedOver = false;
    PortStream remote = null;
    try {
      try {
        remote = sandbox.daemon().connectPort(port);
      } catch (DaemonException e) {
        notOpen(ex, sandbox, port, e.getMessage());
        return;
      }
      PortStream r = remote;
      ex.request.addFailureListener(failure -> r.close()); // the client went away: so does the stream inside
      boolean chunked = ex.request.getLength() < 0 && ex.request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
      NetworkPolicy policy = sandbox.network();
      remote.write(head(ex, chunked, port, upgrade, policy == null ? null : policy.requestHost(port)));
      Upload upload = null;
      if (upgrade == null && Exchange.hasBody(ex.request)) {
        upload = new Upload(ex.body(), r, chunked, sandbox.id());
      }
      java.util.concurrent.atomic.AtomicBoolean late = new java.util.concurrent.atomic.AtomicBoolean();
      // a handshake is answered at once or not at all: one left unanswered holds its slot no longer than this
      org.eclipse.jetty.util.thread.Scheduler.Task deadline = upgrade == null ? null : ex.request.getComponents().getScheduler()
          .schedule(() -> {
            late.set(true);
            r.close();
          }, PortUpgrade.HANDSHAKE_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      try {
        ByteBuffer rest = answer(ex, sandbox, port, remote, upgrade != null, late::get, upload);
        if (rest != null && slot != null) {
          if (deadline != null && !deadline.cancel()) {
            unanswered(ex, sandbox, port, "", late::get); // the deadline closed the stream just as the answer came
          } else {
            PortUpgrade.switchOver(ex, sandbox, port, remote, rest, slot);
            handedOver = true;
          }
        }
      } finally {
        if (deadline != null) {
          deadline.cancel();
        }
        if (upload != null) {
          upload.stop();
        }
      }
    } finally {
      if (!handedOver) {
        if (remote != null) {
          remote.close();
        }
        if (slot != null) {
          slot.release();
        }
      }
    }
  }

  /** No answer came: E2B's 502 for a port not open, or a 504 for an upgrade's handshake left unanswered too long. */
  private static void unanswered(Exchange ex, LocalSandbox sandbox, int port, @Nullable String why,
      java.util.function.BooleanSupplier late) {
    if (late.getAsBoolean()) {
      ex.json(504, Json.object().put("sandboxId", sandbox.id()).put("port", port).put("code", 504)
          .put("message", "Port " + port + " of the sandbox did not answer the upgrade (WebSocket handshake) within "
              + PortUpgrade.HANDSHAKE_WAIT.toSeconds() + " s"));
    } else {
      notOpen(ex, sandbox, port, String.valueOf(why));
    }
  }

  private static void notOpen(Exchange ex, LocalSandbox sandbox, int port, String why) {
    ex.json(502, Json.object().put("sandboxId", sandbox.id()).put("port", port).put("code", 502)
        .put("message", "The sandbox is running but port " + port + " is not open or closed the connection: " + why));
  }

  /** The request line and headers, as the service inside is to see them. */
  private static byte[] head(Exchange ex, boolean chunked, int port, @Nullable String upgrade, @Nullable String maskedHost) {
    String pathQuery = ex.request.getHttpURI().getPathQuery();
    StringBuilder h = new StringBuilder(512).append(ex.method()).append(' ')
        .append(pathQuery == null || pathQuery.isEmpty() ? "/" : pathQuery).append(" HTTP/1.1\r\n");
    boolean host = false;
    for (HttpField f : ex.request.getHeaders()) {
      String name = f.getLowerCaseName();
      if (NOT_RELAYED.contains(name)) {
        continue;
      }
      if (name.equals("host") && maskedHost != null) {
        continue;
      }
      host |= name.equals("host");
      h.append(f.getName()).append(": ").append(f.getValue()).append("\r\n"); // Jetty parsed them: no CR or LF inside
    }
    if (maskedHost != null) {
      h.append("Host: ").append(maskedHost).append("\r\n"); // the sandbox's maskRequestHost: checked printable at create
    } else if (!host) {
      h.append("Host: 127.0.0.1:").append(port).append("\r\n");
    }
    if (chunked) {
      h.append("Transfer-Encoding: chunked\r\n");
    } else if (Exchange.hasBody(ex.request)) {
      h.append("Content-Length: ").append(ex.request.getLength()).append("\r\n");
    }
    if (upgrade != null) {
      h.append("Upgrade: ").append(upgrade).append("\r\nConnection: Upgrade\r\n\r\n");
      return h.toString().getBytes(StandardCharsets.ISO_8859_1);
    }
    return h.append("Connection: close\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * Streams the request's body into the sandbox on a thread of its own, chunked again when it
   * came chunked, so a service may answer while the body still arrives. The request is Jetty's:
   * its exchange may complete only once this thread has stopped reading it (Jetty refuses to
   * complete one with a read pending, and a body not read to its end makes it drop the connection
   * after the answer, where a client that reuses it sees its next request fail unanswered).
   */
  static final class Upload {
    /** How long an answer's head waits for the body to be read whole before it says the connection closes. */
    static final java.time.Duration READ_WAIT = java.time.Duration.ofMillis(500);
    private final Thread thread;
    private final java.util.concurrent.CountDownLatch whole = new java.util.concurrent.CountDownLatch(1);

    Upload(InputStream body, PortStream remote, boolean chunked, String sandboxId) {
      thread = Thread.ofVirtual().name("sandboxes-port-upload-" + sandboxId).start(() -> pump(body, remote, chunked));
    }

    private void pump(InputStream body, PortStream remote, boolean chunked) {
      byte[] buf = new byte[CHUNK];
      try {
        int n;
        while ((n = body.read(buf)) >= 0) {
          if (n == 0) {
            continue;
          }
          if (chunked) {
            remote.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          }
          remote.write(buf, 0, n);
          if (chunked) {
            remote.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          }
        }
        body.close();
        whole.countDown(); // after the last touch of the request: its exchange may complete now
        if (chunked) {
          remote.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        }
      } catch (IOException | RuntimeException e) {
        // the client's body broke off, the service stopped taking it, or the exchange ended first:
        // the answer says what happened
        LOG.debug("a request body for a sandbox port broke off: {}", e.toString());
        remote.close();
      }
    }

    /**
     * Whether the body has been read to its end, waiting a little for it: an answer that comes
     * as the body's last bytes are passed on finds it read, and the connection stays reusable.
     */
    boolean readWhole(java.time.Duration wait) {
      try {
        return whole.await(wait.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return whole.getCount() == 0;
      }
    }

    /** Stops passing the body on, and waits (briefly) for the reading thread to be done with the request. */
    void stop() {
      if (thread.isAlive()) {
        thread.interrupt();
        try {
          thread.join(READ_WAIT);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Reads the service's answer and streams it to the client; for an upgrade the service switched
   * protocols to, nothing is answered yet and what came after the answer's head is returned.
   */
  private static @Nullable ByteBuffer answer(Exchange ex, LocalSandbox sandbox, int port, PortStream remote, boolean upgrade,
      java.util.function.BooleanSupplier late, @Nullable Upload upload) throws IOException {
    Answer a = new Answer(ex, upgrade, upload);
    HttpParser parser = new HttpParser(a, MAX_HEAD);
    parser.setHeadResponse(ex.method().equals("HEAD"));
    try {
      while (!a.complete) {
        byte[] chunk = remote.read();
        if (chunk == null) {
          parser.atEOF();
          parser.parseNext(ByteBuffer.allocate(0));
          break;
        }
        ByteBuffer b = ByteBuffer.wrap(chunk);
        while (b.hasRemaining() && !a.complete) {
          parser.parseNext(b);
          if (a.switched) {
            return b; // the answer's head was read: what follows is the new protocol's
          }
          if (a.informational) { // a 1xx answer: the real one follows
            a.informational = false;
            parser.reset();
          }
          if (a.bad != null) {
            throw new IOException(a.bad);
          }
        }
      }
    } catch (UncheckedIOException e) {
      // the client went away: closing the stream closes the connection into the sandbox
      LOG.debug("the client of port {} of sandbox {} left: {}", port, sandbox.id(), e.getCause().toString());
      remote.close();
      ex.abort(e.getCause());
      return null;
    } catch (IOException e) {
      if (a.out == null) {
        settle(ex, upload);
        unanswered(ex, sandbox, port, e.getMessage(), late);
      } else {
        // the sandbox reset the connection, or went away: the client sees a cut answer, not a whole one
        LOG.debug("port {} of sandbox {} failed mid-answer: {}", port, sandbox.id(), e.toString());
        ex.abort(e);
      }
      return null;
    }
    if (a.out == null) {
      settle(ex, upload);
      unanswered(ex, sandbox, port, a.bad != null ? a.bad : "the connection closed before an answer", late);
    } else if (a.complete) {
      if (upload == null || upload.readWhole(java.time.Duration.ZERO)) {
        ex.finish(a.out);
      } else {
        // the service answered without taking the whole body: the connection still holds its rest
        upload.stop();
        ex.finishThenClose(a.out, "the sandbox's service answered before the request's body was read whole");
      }
    } else {
      ex.abort(new IOException("port " + port + " of sandbox " + sandbox.id() + " closed the connection mid-answer"));
    }
    return null;
  }

  /** Before an answer of the server's own: a body still being passed on stops, and the answer closes the connection. */
  private static void settle(Exchange ex, @Nullable Upload upload) {
    if (upload != null && !upload.readWhole(java.time.Duration.ZERO)) {
      upload.stop();
      ex.bodyLeftUnread();
    }
  }

  /** Jetty's parser's callbacks: the answer's head, then its content written through as it comes. */
  private static final class Answer implements HttpParser.ResponseHandler {
    private final Exchange ex;
    private final boolean upgrade;
    private int status;
    private int kept;
    private @Nullable String contentType;
    private long length = -1;
    @Nullable OutputStream out;
    boolean complete;
    boolean informational;
    /** The service answered the upgrade with 101: its headers are set on the response, nothing is sent yet. */
    boolean switched;
    @Nullable String bad;

    private final @Nullable Upload upload;

    Answer(Exchange ex, boolean upgrade, @Nullable Upload upload) {
      this.ex = ex;
      this.upgrade = upgrade;
      this.upload = upload;
    }

    private boolean switching() {
      return upgrade && status == 101;
    }

    @Override
    public void startResponse(HttpVersion version, int status, String reason) {
      this.status = status;
    }

    @Override
    public void parsedHeader(HttpField field) {
      if (status < 200 && !switching()) {
        return;
      }
      String name = field.getLowerCaseName();
      String value = field.getValue();
      if (name.equals("content-type")) {
        contentType = value.length() <= MAX_HEADER_BYTES ? value : "application/octet-stream";
      } else if (name.equals("content-length")) {
        try {
          length = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
          length = -1;
        }
      } else if (!NOT_RELAYED.contains(name) && kept < MAX_HEADERS && name.length() + value.length() <= MAX_HEADER_BYTES) {
        ex.response.getHeaders().add(field.getName(), value);
        kept++;
      }
    }

    @Override
    public boolean headerComplete() {
      if (switching()) {
        switched = true;
        return true; // the parser stops at the end of the head
      }
      if (status < 200) {
        return false;
      }
      if (length >= 0 && !ex.method().equals("HEAD") && status != 204 && status != 304) {
        ex.response.getHeaders().put(HttpHeader.CONTENT_LENGTH, length);
      }
      if (upload != null && !upload.readWhole(Upload.READ_WAIT)) {
        ex.bodyLeftUnread(); // answered while the body still comes: the answer closes the connection
      }
      out = ex.stream(status, contentType);
      return false;
    }

    @Override
    public boolean content(ByteBuffer item) {
      OutputStream o = out;
      if (o != null && item.hasRemaining()) {
        byte[] b = new byte[item.remaining()];
        item.get(b);
        try {
          o.write(b);
          o.flush();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return false;
    }

    @Override
    public boolean contentComplete() {
      return false;
    }

    @Override
    public boolean messageComplete() {
      if (status < 200) {
        informational = true;
      } else {
        complete = true;
      }
      return true;
    }

    @Override
    public void earlyEOF() {
      bad = "the connection closed mid-answer";
    }

    @Override
    public void badMessage(org.eclipse.jetty.http.HttpException failure) {
      bad = "the answer was not valid HTTP: " + failure.getReason();
    }
  }
}
