package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import org.jspecify.annotations.Nullable;

/**
 * envd's file transfer endpoint, {@code GET} and {@code POST /files}: whole reads, streamed reads
 * that hold one buffer at a time, raw ({@code application/octet-stream}) uploads from bytes or a
 * stream, optionally gzip-compressed, and several files in one multipart upload. The user goes in
 * the {@code username} query parameter; metadata in {@code X-Metadata-<key>} headers.
 */
public final class EnvdFiles {
  /** The most of an error answer's body that is read to word the error. */
  private static final int ERROR_BODY_BYTES = 64 * 1024;

  private final Envd envd;

  public EnvdFiles(Envd envd) {
    this.envd = envd;
  }

  /** @return the client's request timeout, zero for none */
  public Duration defaultTimeout() {
    return envd.http().requestTimeout();
  }

  /** One file of a multipart upload: its target path and a supplier of its content, called once. */
  public record Part(String path, Supplier<HttpRequest.BodyPublisher> content) {}

  private static String query(@Nullable String path, @Nullable String user) {
    List<String> q = new ArrayList<>();
    if (path != null) {
      q.add("path=" + URLEncoder.encode(path, StandardCharsets.UTF_8));
    }
    if (user != null) {
      q.add("username=" + URLEncoder.encode(user, StandardCharsets.UTF_8));
    }
    return q.isEmpty() ? "files" : "files?" + String.join("&", q);
  }

  /** A request through the client, with its own timeout: a positive one, or none at all for zero. */
  private HttpRequest.Builder request(String target, @Nullable Duration timeout) {
    if (timeout == null) {
      return envd.request(target, null);
    }
    return envd.request(envd.http().withRequestTimeout(timeout), target, null);
  }

  /**
   * Reads a whole file.
   *
   * @param gzip whether to ask for a gzip answer (an uncompressed one is taken as it is)
   * @param timeout the request's timeout, or null for the client's
   */
  public byte[] read(String path, @Nullable String user, boolean gzip, @Nullable Duration timeout) {
    String context = "read " + path + " in sandbox " + envd.sandboxId();
    HttpRequest.Builder b = request(query(path, user), timeout).GET();
    if (gzip) {
      b.header("Accept-Encoding", "gzip");
    }
    HttpResponse<byte[]> response = envd.http().send(b.build(), context);
    if (response.statusCode() != 200) {
      throw envd.filesError(response.statusCode(), response.body(), path, context);
    }
    if (!gzipped(response)) {
      return response.body();
    }
    try (InputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(response.body()))) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new SandboxException(context + ": the gzip answer could not be read: " + e.getMessage(), e);
    }
  }

  /**
   * Opens a file for reading as it arrives. The request timeout bounds the wait for the answer to
   * start; then {@code idle} bounds each wait for more bytes while the caller reads. Closing the
   * stream releases the connection.
   *
   * @param idle how long a read may wait for bytes; zero for no limit
   */
  public InputStream readStream(String path, @Nullable String user, boolean gzip, @Nullable Duration timeout, Duration idle) {
    String context = "read " + path + " in sandbox " + envd.sandboxId();
    HttpRequest.Builder b = request(query(path, user), timeout).GET();
    if (gzip) {
      b.header("Accept-Encoding", "gzip");
    }
    HttpResponse<InputStream> response = envd.http().stream(b.build(), context);
    InputStream body = response.body();
    if (response.statusCode() != 200) {
      byte[] raw;
      try (body) {
        raw = body.readNBytes(ERROR_BODY_BYTES);
      } catch (IOException e) {
        raw = new byte[0];
      }
      throw envd.filesError(response.statusCode(), raw, path, context);
    }
    InputStream guarded = idle.isZero() ? body : new IdleGuard(body, idle, envd.sandboxId());
    if (!gzipped(response)) {
      return guarded;
    }
    try {
      return new GZIPInputStream(guarded, 64 * 1024);
    } catch (IOException e) {
      closeQuietly(guarded);
      throw new SandboxException(context + ": the gzip answer could not be read: " + e.getMessage(), e);
    }
  }

  private static boolean gzipped(HttpResponse<?> response) {
    return response.headers().firstValue("content-encoding").map(v -> v.trim().equalsIgnoreCase("gzip")).orElse(false);
  }

  /**
   * Writes one file from a raw body.
   *
   * @param body the content, already compressed when {@code gzip} is set
   * @param gzip whether the body is gzip-compressed
   * @param timeout the request's timeout, null for the client's, zero for none
   * @return the daemon's answer, an array with one element per file written, or null when it
   *     answered 200 with no body
   */
  public @Nullable JsonNode write(String path, HttpRequest.BodyPublisher body, boolean gzip, @Nullable String user,
      Map<String, String> metadata, @Nullable Duration timeout) {
    String context = "write " + path + " in sandbox " + envd.sandboxId();
    HttpRequest.Builder b = request(query(path, user), timeout).header("Content-Type", "application/octet-stream");
    if (gzip) {
      b.header("Content-Encoding", "gzip");
    }
    metadata.forEach((k, v) -> b.header("X-Metadata-" + k, v));
    return answer(envd.http().send(b.POST(body).build(), context), path, context);
  }

  /**
   * Writes several files in one multipart request, each part named by its target path, as E2B's
   * SDKs do; the parts' content is sent as it is read.
   *
   * @param timeout the request's timeout, null for the client's, zero for none
   * @return the daemon's answer, an array with one element per file written, or null when it
   *     answered 200 with no body
   */
  public @Nullable JsonNode writeAll(List<Part> parts, @Nullable String user, Map<String, String> metadata, @Nullable Duration timeout) {
    String context = "write " + parts.size() + " files in sandbox " + envd.sandboxId();
    String boundary = "sandboxes-" + java.util.UUID.randomUUID();
    List<HttpRequest.BodyPublisher> body = new ArrayList<>();
    for (Part p : parts) {
      body.add(HttpRequest.BodyPublishers.ofByteArray(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
          + p.path() + "\"\r\nContent-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8)));
      body.add(p.content().get());
      body.add(HttpRequest.BodyPublishers.ofByteArray("\r\n".getBytes(StandardCharsets.UTF_8)));
    }
    body.add(HttpRequest.BodyPublishers.ofByteArray(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8)));
    HttpRequest.Builder b = request(query(null, user), timeout).header("Content-Type", "multipart/form-data; boundary=" + boundary);
    metadata.forEach((k, v) -> b.header("X-Metadata-" + k, v));
    HttpRequest req = b.POST(HttpRequest.BodyPublishers.concat(body.toArray(HttpRequest.BodyPublisher[]::new))).build();
    return answer(envd.http().send(req, context), parts.get(0).path(), context);
  }

  /**
   * Whether a path can name a part of a multipart upload as it is: printable ASCII without a
   * quote or a backslash, which a {@code filename="…"} parameter carries unchanged.
   */
  public static boolean fitsMultipart(String path) {
    return !path.isEmpty() && path.chars().allMatch(c -> c >= 0x20 && c <= 0x7e && c != '"' && c != '\\');
  }

  private @Nullable JsonNode answer(HttpResponse<byte[]> response, String path, String context) {
    if (response.statusCode() != 200) {
      throw envd.filesError(response.statusCode(), response.body(), path, context);
    }
    if (response.body().length == 0) {
      return null;
    }
    JsonNode written;
    try {
      written = Json.parse(response.body());
    } catch (IOException e) {
      throw new SandboxException(context + ": unreadable answer from the sandbox daemon", e);
    }
    if (!written.isArray() || written.isEmpty()) {
      throw new SandboxException(context + ": the daemon answered without saying what it wrote: "
          + Json.abbreviate(new String(response.body(), StandardCharsets.UTF_8)));
    }
    return written;
  }

  /** The bytes gzip-compressed, in memory. */
  public static byte[] gzip(byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, data.length / 2));
    try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(out)) {
      z.write(data);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e); // writing to memory does not fail
    }
    return out.toByteArray();
  }

  /**
   * A stream that gzip-compresses another as it is read, a piece at a time, so a compressed upload
   * never holds more than one piece of its source.
   */
  public static InputStream gzipping(InputStream source) {
    return new GzipSource(source);
  }

  private static final class GzipSource extends InputStream {
    private final InputStream source;
    private final Pending pending = new Pending();
    private final java.util.zip.GZIPOutputStream gzip;
    private final byte[] piece = new byte[64 * 1024];
    private boolean finished;

    /** The compressed bytes not yet read. */
    private static final class Pending extends ByteArrayOutputStream {
      int pos;

      int take(byte[] b, int off, int len) {
        int n = Math.min(len, count - pos);
        System.arraycopy(buf, pos, b, off, n);
        pos += n;
        if (pos == count) {
          reset();
          pos = 0;
        }
        return n;
      }

      int available() {
        return count - pos;
      }
    }

    GzipSource(InputStream source) {
      this.source = source;
      try {
        this.gzip = new java.util.zip.GZIPOutputStream(pending, 64 * 1024);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e); // writing to memory does not fail
      }
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      while (pending.available() == 0) {
        if (finished) {
          return -1;
        }
        int n = source.read(piece);
        if (n < 0) {
          gzip.finish();
          finished = true;
        } else {
          gzip.write(piece, 0, n);
        }
      }
      return pending.take(b, off, len);
    }

    @Override
    public void close() throws IOException {
      source.close();
    }
  }

  /**
   * Closes the stream under a read that waits longer than the idle timeout for bytes; a caller
   * that is not reading is not timed. Its one timer thread ends with the stream.
   */
  private static final class IdleGuard extends java.io.FilterInputStream {
    private final long idleNanos;
    private final Thread timer;
    /** When the read under way began, or 0 when no read is under way. */
    private volatile long readingSince;
    private volatile boolean idledOut;
    private volatile boolean closed;

    IdleGuard(InputStream in, Duration idle, String owner) {
      super(in);
      this.idleNanos = idle.toNanos();
      this.timer = Tasks.start(owner, "sandboxes-read-idle-" + owner, this::watch);
    }

    private void watch() {
      long step = Math.max(Duration.ofMillis(20).toNanos(), Math.min(idleNanos / 4, Duration.ofSeconds(1).toNanos()));
      try {
        while (!closed) {
          long since = readingSince;
          if (since != 0 && System.nanoTime() - since >= idleNanos) {
            idledOut = true;
            closeQuietly(in);
            return;
          }
          Thread.sleep(Duration.ofNanos(step));
        }
      } catch (InterruptedException stopped) {
        // the stream was closed
      }
    }

    private IOException idle(IOException e) {
      return idledOut ? new java.net.SocketTimeoutException("no bytes arrived for " + Duration.ofNanos(idleNanos)
          + " while reading; the stream was closed") : e;
    }

    @Override
    public int read() throws IOException {
      readingSince = System.nanoTime();
      try {
        return in.read();
      } catch (IOException e) {
        throw idle(e);
      } finally {
        readingSince = 0;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      readingSince = System.nanoTime();
      try {
        int n = in.read(b, off, len);
        if (n < 0) {
          if (idledOut) {
            throw idle(new IOException("closed"));
          }
          closed = true; // read to its end: the timer has nothing left to watch
          timer.interrupt();
        }
        return n;
      } catch (IOException e) {
        throw idle(e);
      } finally {
        readingSince = 0;
      }
    }

    @Override
    public void close() throws IOException {
      closed = true;
      timer.interrupt();
      in.close();
    }
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) {
      // releasing the connection; nothing more to learn
    }
  }
}
