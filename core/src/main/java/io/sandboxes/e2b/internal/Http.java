package io.sandboxes.e2b.internal;

import io.sandboxes.SandboxException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP client of one provider. By default a JDK {@link HttpClient} on its own virtual-thread
 * executor, both closed by {@link #close()}; with a {@link Transport} the caller's SSL context,
 * proxy selector or executor go into that client, and a caller's whole {@link HttpClient} is used
 * as it is and never closed here (nor is a caller's executor). Plain {@code http://} URLs are
 * spoken as HTTP/1.1 (what a local server offers); {@code https://} negotiates HTTP/2 through ALPN.
 * Every request carries this client's {@code User-Agent}.
 */
public final class Http implements AutoCloseable {
  /**
   * What a caller brought: either a whole client, or parts of the one built here (each may be null).
   */
  public record Transport(@Nullable HttpClient client, @Nullable SSLContext sslContext, @Nullable ProxySelector proxy,
      @Nullable Executor executor) {
    /** Nothing brought: the provider builds and owns everything. */
    public static final Transport DEFAULT = new Transport(null, null, null, null);
  }

  private final @Nullable ExecutorService ownedExecutor;
  private final HttpClient client;
  private final boolean ownsClient;
  private final Duration requestTimeout;
  private final String userAgent;

  public Http(Duration requestTimeout) {
    this(requestTimeout, Transport.DEFAULT);
  }

  public Http(Duration requestTimeout, Transport transport) {
    this(requestTimeout, transport, Identity.USER_AGENT);
  }

  /** @param userAgent the {@code User-Agent} every request carries ({@link Identity#userAgent(String)}) */
  public Http(Duration requestTimeout, Transport transport, String userAgent) {
    this.requestTimeout = requestTimeout;
    this.userAgent = userAgent;
    if (transport.client() != null) {
      this.client = transport.client();
      this.ownsClient = false;
      this.ownedExecutor = null;
      return;
    }
    Executor executor = transport.executor();
    if (executor == null) {
      this.ownedExecutor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-http-", 0).factory());
      executor = ownedExecutor;
    } else {
      this.ownedExecutor = null;
    }
    HttpClient.Builder b = HttpClient.newBuilder()
        .executor(executor)
        .connectTimeout(requestTimeout.isZero() ? Duration.ofSeconds(30) : requestTimeout)
        .followRedirects(HttpClient.Redirect.NEVER);
    if (transport.sslContext() != null) {
      b.sslContext(transport.sslContext());
    }
    if (transport.proxy() != null) {
      b.proxy(transport.proxy());
    }
    this.client = b.build();
    this.ownsClient = true;
  }

  private Http(Http shared, Duration requestTimeout) {
    this.client = shared.client;
    this.ownsClient = false;
    this.ownedExecutor = null;
    this.requestTimeout = requestTimeout;
    this.userAgent = shared.userAgent;
  }

  /**
   * The same client with another request timeout: a view for calls made with their own timeout.
   * Closing the view closes nothing; the client stays this one's.
   */
  public Http withRequestTimeout(Duration requestTimeout) {
    return new Http(this, requestTimeout);
  }

  /** How long one request may take by default; zero for no limit. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  public HttpRequest.Builder request(URI uri) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).header("User-Agent", userAgent);
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
      throw new SandboxException(context + ": no answer from " + request.uri().getHost() + " within "
          + request.timeout().orElse(requestTimeout), e);
    } catch (IOException e) {
      throw new SandboxException(context + ": request to " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException(context + ": interrupted", e);
    }
  }

  @Override
  public void close() {
    if (ownsClient) {
      client.shutdownNow();
      client.close();
    }
    if (ownedExecutor != null) {
      ownedExecutor.shutdownNow();
      ownedExecutor.close();
    }
  }
}
