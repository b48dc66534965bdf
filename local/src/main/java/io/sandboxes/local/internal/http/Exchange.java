package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.jspecify.annotations.Nullable;

/**
 * One request and its response, for handlers that run on a virtual thread and may block: read
 * the body as a stream, answer with JSON, bytes, an empty status, or a stream of writes. Every
 * answer completes the Jetty callback exactly once.
 */
final class Exchange {
  final Request request;
  final Response response;
  private final Callback callback;
  private @Nullable Fields query;
  private boolean completed;
  private boolean bodyRead;
  private @Nullable InputStream body;

  Exchange(Request request, Response response, Callback callback) {
    this.request = request;
    this.response = response;
    this.callback = callback;
  }

  String method() {
    return request.getMethod();
  }

  String path() {
    return Request.getPathInContext(request);
  }

  @Nullable String header(String name) {
    return request.getHeaders().get(name);
  }

  @Nullable String query(String name) {
    if (query == null) {
      query = Request.extractQueryParameters(request, StandardCharsets.UTF_8);
    }
    return query.getValue(name);
  }

  InputStream body() {
    bodyRead = true;
    if (body == null) {
      body = Content.Source.asInputStream(request);
    }
    return body;
  }

  /**
   * The body of an upload the sandbox may refuse before its end (a full disk): closing it leaves
   * the rest of the body to {@link #discardBody}, where closing {@link #body()} before its end
   * fails the request's content, and the answer then closes a connection the client still sends
   * on.
   */
  InputStream uploadBody() {
    return new java.io.FilterInputStream(body()) {
      @Override
      public void close() {
        // left open: read to its end by discardBody, or consumed or cut off by Jetty as the answer completes
      }
    };
  }

  /**
   * Says that the body asked for was refused before it was read to its end (an upload to a spent
   * link): the answer then closes the connection, which still holds the rest of it (a client that
   * sent its next request there would get no answer at all).
   */
  void bodyLeftUnread() {
    bodyRead = false;
  }

  /**
   * An answer given without reading the request's body leaves the connection unusable for the
   * next request; saying so lets a client open a new one instead of racing the close.
   */
  private void closeIfBodyUnread() {
    if (!bodyRead && hasBody(request)) {
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
    }
  }

  /**
   * Whether a request carries a body: a positive length, or a chunked one. A request with
   * neither (a GET, as most clients send it) has none, and its connection stays reusable.
   */
  static boolean hasBody(Request request) {
    long length = request.getLength();
    return length > 0 || (length < 0 && request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING));
  }

  /**
   * The most a JSON request body may hold: far more than any control-plane or unary envd message
   * needs, small enough that concurrent oversized posts cannot grow the server's memory.
   */
  static final int MAX_JSON_BODY = 1 << 20;

  /** A request body past {@link #MAX_JSON_BODY}: answered 413, the rest of it never read. */
  static final class BodyTooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    BodyTooLarge() {
      super("the request body is larger than " + MAX_JSON_BODY + " bytes");
    }
  }

  /**
   * Reads a JSON body whole, refusing one past {@link #MAX_JSON_BODY}: a declared length over the
   * limit is refused before a byte is read; an undeclared one after at most one byte too many.
   *
   * @throws BodyTooLarge for a body past the limit
   */
  byte[] bodyBytes() throws IOException {
    if (request.getLength() > MAX_JSON_BODY) {
      throw new BodyTooLarge();
    }
    InputStream in = body();
    byte[] raw = in.readNBytes(MAX_JSON_BODY + 1);
    if (raw.length > MAX_JSON_BODY) {
      throw new BodyTooLarge(); // left open and unread: the answer closes the connection
    }
    in.close();
    return raw;
  }

  /** Answers 413 for a body past the limit, closing the connection (its rest is never read). */
  void tooLarge(BodyTooLarge e) {
    bodyRead = false;
    json(413, Json.object().put("code", 413).put("message", e.getMessage()));
  }

  /** How much of a refused request's body is read and dropped, so a small upload gets its answer cleanly. */
  static final int DISCARDED_BODY = 64 * 1024;
  /**
   * How much of a refused upload's body is read and dropped: what a client has usually sent
   * before it could see an answer. A connection closed with a body still arriving is reset, and a
   * client that is still sending loses the answer with it (the JDK's client reports "header
   * parser received no bytes").
   */
  static final int DISCARDED_UPLOAD = 8 * 1024 * 1024;

  /**
   * Reads and drops a refused request's body when it is small (at most {@link #DISCARDED_BODY}),
   * so the client, which may still be sending it, reads the answer instead of a reset. A larger
   * or longer body is left unread and the answer closes the connection, as before.
   */
  void discardSmallBody() {
    if (!bodyRead) {
      discardBody(DISCARDED_BODY);
    }
  }

  /**
   * Reads and drops what is left of a refused request's body, up to {@code limit} bytes: read to
   * its end, the connection stays usable; a body declared or found larger is left, and the answer
   * closes the connection.
   */
  void discardBody(long limit) {
    bodyRead = false;
    if (request.getLength() == 0 || request.getLength() > limit) {
      return;
    }
    try {
      InputStream in = body != null ? body : Content.Source.asInputStream(request);
      byte[] sink = new byte[8192];
      long dropped = 0;
      int n;
      while (dropped <= limit && (n = in.read(sink)) >= 0) {
        dropped += n;
      }
      if (dropped <= limit) {
        bodyRead = true;
      }
    } catch (IOException e) {
      // the answer closes the connection
    }
  }

  boolean completed() {
    return completed;
  }

  void json(int status, JsonNode body) {
    bytes(status, "application/json", Json.bytes(body));
  }

  void bytes(int status, String contentType, byte[] body) {
    closeIfBodyUnread();
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    completed = true;
    response.write(true, java.nio.ByteBuffer.wrap(body), callback);
  }

  void empty(int status) {
    closeIfBodyUnread();
    response.setStatus(status);
    completed = true;
    response.write(true, java.nio.ByteBuffer.allocate(0), callback);
  }

  /**
   * Starts a streamed answer; the caller writes, flushes and finally calls {@link #finish}.
   *
   * @param contentType the answer's type, or null for none
   */
  OutputStream stream(int status, @Nullable String contentType) {
    closeIfBodyUnread();
    response.setStatus(status);
    if (contentType != null) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    }
    completed = true;
    return Content.Sink.asOutputStream(response);
  }

  /**
   * Ends a streamed answer with its last bytes: they and the chunk that ends the body go in one
   * write. The stream {@link #stream} gave is not written to again.
   */
  void finishWith(byte[] last) {
    response.write(true, java.nio.ByteBuffer.wrap(last), callback);
  }

  void finish(OutputStream out) {
    try {
      out.close();
      callback.succeeded();
    } catch (IOException e) {
      callback.failed(e);
    }
  }

  /**
   * Ends a streamed answer whole, then drops the connection: for a request whose body was not
   * read to its end (its answer says {@code Connection: close}, see {@link #bodyLeftUnread}).
   */
  void finishThenClose(OutputStream out, String why) {
    try {
      out.close();
      callback.failed(new IOException(why));
    } catch (IOException e) {
      callback.failed(e);
    }
  }

  void abort(Throwable failure) {
    callback.failed(failure);
  }
}
