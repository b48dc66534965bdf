package io.sandboxes.e2b.internal;

import io.sandboxes.SandboxException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HTTP client of one provider: a JDK {@link HttpClient} on its own virtual-thread executor,
 * both closed by {@link #close()}. Plain {@code http://} URLs are spoken as HTTP/1.1 (what a local
 * server offers); {@code https://} negotiates HTTP/2 through ALPN.
 */
public final class Http implements AutoCloseable {
  private final ExecutorService executor;
  private final HttpClient client;
  private final Duration requestTimeout;

  public Http(Duration requestTimeout) {
    this.requestTimeout = requestTimeout;
    this.executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-http-", 0).factory());
    this.client = HttpClient.newBuilder()
        .executor(executor)
        .connectTimeout(requestTimeout.isZero() ? Duration.ofSeconds(30) : requestTimeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  public HttpRequest.Builder request(URI uri) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri);
    if ("http".equalsIgnoreCase(uri.getScheme())) {
      b.version(HttpClient.Version.HTTP_1_1);
    }
    if (!requestTimeout.isZero()) {
      b.timeout(requestTimeout);
    }
    return b;
  }

  public HttpResponse<byte[]> send(HttpRequest request, String context) {
    return send(request, HttpResponse.BodyHandlers.ofByteArray(), context);
  }

  public HttpResponse<InputStream> stream(HttpRequest request, String context) {
    return send(request, HttpResponse.BodyHandlers.ofInputStream(), context);
  }

  private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler, String context) {
    try {
      return client.send(request, handler);
    } catch (HttpTimeoutException e) {
      throw new SandboxException(context + ": no answer from " + request.uri().getHost() + " within " + requestTimeout, e);
    } catch (IOException e) {
      throw new SandboxException(context + ": request to " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException(context + ": interrupted", e);
    }
  }

  @Override
  public void close() {
    client.shutdownNow();
    executor.shutdownNow();
    client.close();
    executor.close();
  }
}
