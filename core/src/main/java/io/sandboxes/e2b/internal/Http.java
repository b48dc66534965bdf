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
 * spoken as HTTP/1.1 (what a local server offers), by {@link Http1} on the caller's own thread
 * when the client is this one's and no proxy is in the way; {@code https://} negotiates HTTP/2
 * through ALPN.
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
  /** Plain-http requests with small bodies, on the caller's thread; null when the caller brought the client or a proxy. */
  private final @Nullable Http1 direct;
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
      this.direct = null;
      return;
    }
    Executor executor = transport.executor();
    if (executor == null) {
      this.ownedExecutor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("sandboxes-http-", 0).factory());
      executor = ownedExecutor;
    } else {
      this.ownedExecutor = null;
    }
    Duration connectTimeout = requestTimeout.isZero() ? Duration.ofSeconds(30) : requestTimeout;
    HttpClient.Builder b = HttpClient.newBuilder()
        .executor(executor)
        .connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NEVER);
    if (transport.sslContext() != null) {
      b.sslContext(transport.sslContext());
    }
    if (transport.proxy() != null) {
      b.proxy(transport.proxy());
    }
    this.client = b.build();
    this.ownsClient = true;
    this.direct = transport.proxy() == null ? new Http1(connectTimeout) : null;
  }

  private Http(Http shared, Duration requestTimeout) {
    this.client = shared.client;
    this.direct = shared.direct;
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

  /** Sends a request and reads its answer whole. */
  @SuppressWarnings("unchecked")
  public HttpResponse<byte[]> send(HttpRequest request, String context) {
    return (HttpResponse<byte[]>) send(request, false, context);
  }

  /** Sends a request; the answer's body is read as it comes, and must be closed. */
  @SuppressWarnings("unchecked")
  public HttpResponse<InputStream> stream(HttpRequest request, String context) {
    return (HttpResponse<InputStream>) send(request, true, context);
  }

  private HttpResponse<?> send(HttpRequest request, boolean stream, String context) {
    try {
      byte[] body = direct == null ? null : Http1.sendable(request);
      if (body != null) {
        return direct.send(request, body, stream);
      }
      return stream ? client.send(request, HttpResponse.BodyHandlers.ofInputStream())
          : client.send(request, HttpResponse.BodyHandlers.ofByteArray());
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
    if (ownsClient && direct != null) {
      direct.close();
    }
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
