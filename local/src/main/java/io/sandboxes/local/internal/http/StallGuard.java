package io.sandboxes.local.internal.http;

import java.time.Duration;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Two idle timeouts for one connection, by the phase its request is in. While a request's
 * headers or body are arriving (and while a kept-alive connection waits for its next request)
 * the connector's short timeout holds, so a client that stalls there is closed soon. Once the
 * whole request has been read, the connection gets the long timeout for as long as the answer
 * takes: a process's or a watch's stream, quiet between keepalives, or a download a slow client
 * reads. When the answer is complete the connection waits for its next request under the
 * keep-alive timeout, which a server should keep longer than its clients' own: a client that
 * reuses a connection at the moment the server drops it sees a request fail that never reached
 * the server (the JDK's client keeps idle connections 30 s and retries only idempotent calls).
 */
public final class StallGuard extends Handler.Wrapper {
  private final long shortMillis;
  private final long longMillis;
  private final long keepAliveMillis;

  /**
   * @param handler what answers the requests
   * @param stalled the connector's idle timeout: for headers and bodies, and a new connection's
   *     wait for its first request
   * @param answering the idle timeout while a request is answered, once it has been read whole
   * @param keepAlive the idle timeout of a connection between an answer and its next request
   */
  public StallGuard(Handler handler, Duration stalled, Duration answering, Duration keepAlive) {
    super(handler);
    this.shortMillis = stalled.toMillis();
    this.longMillis = Math.max(answering.toMillis(), shortMillis);
    this.keepAliveMillis = keepAlive.toMillis();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
    Callback restoring = new Callback.Nested(callback) {
      @Override
      public void succeeded() {
        endPoint.setIdleTimeout(keepAliveMillis); // answered whole: the connection may be reused
        super.succeeded();
      }

      @Override
      public void failed(Throwable x) {
        endPoint.setIdleTimeout(shortMillis);
        super.failed(x);
      }
    };
    if (!Exchange.hasBody(request)) {
      endPoint.setIdleTimeout(longMillis);
      return handled(endPoint, request, response, restoring);
    }
    Request reading = new Request.Wrapper(request) {
      @Override
      public Content.Chunk read() {
        Content.Chunk chunk = super.read();
        if (chunk != null && chunk.isLast()) {
          endPoint.setIdleTimeout(longMillis); // the body is in: what follows is the answer
        }
        return chunk;
      }
    };
    return handled(endPoint, reading, response, restoring);
  }

  private boolean handled(EndPoint endPoint, Request request, Response response, Callback callback) throws Exception {
    boolean handled = false;
    try {
      handled = super.handle(request, response, callback);
      return handled;
    } finally {
      if (!handled) {
        endPoint.setIdleTimeout(shortMillis); // Jetty answers it, and the callback is not ours to complete
      }
    }
  }
}
