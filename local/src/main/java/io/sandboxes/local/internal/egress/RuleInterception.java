package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.common.StructuredLog;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's handling of a connection to a destination that has header rules. For TLS it
 * answers the sandbox's {@code CONNECT}, completes the sandbox's handshake itself with a leaf for
 * the destination's name signed by this server's {@link GatewayCa} (which every sandbox on the
 * network trusts), reads the request head, sets the rules' headers (secrets filled in here, at
 * send time, from the host's store), and sends the request over its own TLS connection to the
 * destination, verified against the JVM's trust and the server's extra CAs. Plain HTTP gets the
 * same headers. One request per connection: the destination is asked to close after answering,
 * so every request a sandbox sends is one whose head was rewritten. Nothing of a filled value is
 * logged; the sandbox's own answers never carry one. Destinations without rules never come here.
 */
public final class RuleInterception {
  private static final Logger LOG = LoggerFactory.getLogger(RuleInterception.class);
  private static final int HANDSHAKE_TIMEOUT_MILLIS = 15_000;
  /** Headers a request's hop carries, never passed on (RFC 9110, 7.6.1), and the proxy's own. */
  private static final java.util.Set<String> HOP = java.util.Set.of("connection", "proxy-connection", "keep-alive",
      "proxy-authorization", "te", "upgrade");

  private final GatewayCa ca;
  private final List<X509Certificate> extraCas;
  private final SSLContext upstream;
  private final Function<String, @Nullable String> secrets;
  private final Map<String, SSLContext> servers = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, SSLContext> eldest) {
      return size() > GatewayCa.MAX_LEAVES;
    }
  };

  /**
   * @param ca this server's CA
   * @param extraCas certificates the server trusts besides the JVM's (a corporate proxy's, say)
   * @param secrets a secret's value by its lower-case name, null when there is none
   */
  public RuleInterception(GatewayCa ca, List<X509Certificate> extraCas, Function<String, @Nullable String> secrets) {
    this.ca = ca;
    this.extraCas = List.copyOf(extraCas);
    this.secrets = secrets;
    this.upstream = upstreamContext(this.extraCas);
  }

  /** @return whether the server was given CAs of its own to trust (every sandbox then trusts them too) */
  public boolean hasExtraCas() {
    return !extraCas.isEmpty();
  }

  /** @return what every sandbox's trust store gets: this server's CA, then the extra CAs, as PEM */
  public String trustBundle() {
    StringBuilder pem = new StringBuilder(GatewayCa.pem(ca.certificate()));
    extraCas.forEach(c -> pem.append(GatewayCa.pem(c)));
    return pem.toString();
  }

  private static SSLContext upstreamContext(List<X509Certificate> extras) {
    try {
      TrustManagerFactory jvm = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      jvm.init((KeyStore) null);
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      int i = 0;
      for (var tm : jvm.getTrustManagers()) {
        if (tm instanceof javax.net.ssl.X509TrustManager x) {
          for (X509Certificate c : x.getAcceptedIssuers()) {
            store.setCertificateEntry("jvm-" + i++, c);
          }
        }
      }
      for (X509Certificate c : extras) {
        store.setCertificateEntry("extra-" + i++, c);
      }
      TrustManagerFactory all = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      all.init(store);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, all.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("the gateway's upstream trust could not be set up: " + e.getMessage(), e);
    }
  }

  private synchronized SSLContext serverContext(String host) throws GeneralSecurityException, IOException {
    SSLContext known = servers.get(host);
    if (known != null) {
      return known;
    }
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    char[] pass = new char[0];
    keys.setKeyEntry("leaf", ca.leafKey(), pass, new X509Certificate[] {ca.leaf(host), ca.certificate()});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, pass);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    servers.put(host, ctx);
    return ctx;
  }

  /**
   * Serves one intercepted connection, the destination already dialled (through whatever the
   * gateway dials with).
   *
   * @param head for plain HTTP, the request head as the gateway forwards it (origin form); null for CONNECT
   * @param headers the rules' headers for this destination, secrets not filled in
   */
  void serve(Socket client, InputStream in, Socket upstreamSocket, String host, int port, @Nullable String head,
      Map<String, String> headers, String source) throws IOException, InterruptedException {
    OutputStream toClient = client.getOutputStream();
    if (head != null) {
      String filled;
      try {
        filled = rewrite(head, headers);
      } catch (IllegalStateException e) {
        fail(toClient, host, e.getMessage());
        return;
      }
      OutputStream up = upstreamSocket.getOutputStream();
      up.write(filled.getBytes(StandardCharsets.ISO_8859_1));
      up.flush();
      logApplied(source, host, port, headers, false);
      splice(in, up, upstreamSocket, upstreamSocket.getInputStream(), toClient, client);
      return;
    }
    toClient.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    toClient.flush();
    SSLSocket tls;
    try {
      tls = (SSLSocket) serverContext(host).getSocketFactory().createSocket(client, host, port, false);
    } catch (GeneralSecurityException e) {
      throw new IOException("no TLS for " + host + ": " + e.getMessage(), e);
    }
    try (tls) {
      tls.setUseClientMode(false);
      SSLParameters params = tls.getSSLParameters();
      params.setApplicationProtocols(new String[] {"http/1.1"});
      tls.setSSLParameters(params);
      tls.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
      tls.startHandshake();
      byte[] requestHead = EgressGateway.readHead(tls.getInputStream());
      if (requestHead == null) {
        return;
      }
      String filled;
      try {
        filled = rewrite(new String(requestHead, StandardCharsets.ISO_8859_1), headers);
      } catch (IllegalStateException e) {
        fail(tls.getOutputStream(), host, e.getMessage());
        return;
      }
      SSLSocket out = (SSLSocket) upstream.getSocketFactory().createSocket(upstreamSocket, host, port, false);
      try (out) {
        SSLParameters up = out.getSSLParameters();
        up.setEndpointIdentificationAlgorithm("HTTPS");
        up.setApplicationProtocols(new String[] {"http/1.1"});
        if (Destinations.v4(host) == null && host.indexOf(':') < 0) {
          up.setServerNames(List.of(new SNIHostName(host)));
        }
        out.setSSLParameters(up);
        out.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
        try {
          out.startHandshake();
        } catch (IOException e) {
          fail(tls.getOutputStream(), host, "the destination's TLS could not be verified (" + e.getMessage() + "); the gateway trusts "
              + "the JVM's CAs and the server's extra CAs");
          return;
        }
        out.setSoTimeout(0);
        tls.setSoTimeout(0);
        out.getOutputStream().write(filled.getBytes(StandardCharsets.ISO_8859_1));
        out.getOutputStream().flush();
        logApplied(source, host, port, headers, true);
        splice(tls.getInputStream(), out.getOutputStream(), out, out.getInputStream(), tls.getOutputStream(), tls);
      }
    }
  }

  private static void logApplied(String source, String host, int port, Map<String, String> headers, boolean tls) {
    // the header names only: never a value, filled or not
    StructuredLog.atDebug(LOG).addKeyValue("event", "egress.rule_applied").addKeyValue("source", source).addKeyValue("host", host)
        .addKeyValue("port", port).addKeyValue("tls", tls).addKeyValue("headers", String.join(",", headers.keySet()))
        .log("egress request rewritten by the sandbox's header rules");
  }

  /**
   * The head with the rules' headers in place of any of the same name, hop headers dropped and
   * {@code Connection: close} asked for; secrets filled in.
   */
  String rewrite(String head, Map<String, String> headers) {
    String[] lines = head.split("\r\n");
    StringBuilder out = new StringBuilder(lines[0]).append("\r\n");
    java.util.Set<String> replaced = new java.util.TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    replaced.addAll(headers.keySet());
    for (int i = 1; i < lines.length; i++) {
      String line = lines[i];
      int colon = line.indexOf(':');
      if (line.isEmpty() || colon <= 0) {
        continue;
      }
      String name = line.substring(0, colon).trim();
      if (replaced.contains(name) || HOP.contains(name.toLowerCase(Locale.ROOT))) {
        continue;
      }
      out.append(line).append("\r\n");
    }
    List<String> added = new ArrayList<>();
    headers.forEach((name, value) -> added.add(name + ": " + HeaderRules.fill(value, secrets) + "\r\n"));
    added.forEach(out::append);
    return out.append("Connection: close\r\n\r\n").toString();
  }

  /** A 502 the gateway itself sends, marked as its own (RFC 9209), never with a filled value. */
  private static void fail(OutputStream to, String host, String why) {
    try {
      byte[] body = ("The egress gateway did not send the request to " + host + ": " + why + ".\n").getBytes(StandardCharsets.UTF_8);
      to.write(("HTTP/1.1 502 Bad Gateway\r\nProxy-Status: sandboxes-egress; error=proxy_internal_error\r\n"
          + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
      to.write(body);
      to.flush();
    } catch (IOException e) {
      LOG.debug("the gateway's 502 could not be sent: {}", e.toString());
    }
  }

  private static void splice(InputStream fromClient, OutputStream toUpstream, Socket upstream, InputStream fromUpstream,
      OutputStream toClient, Socket client) throws InterruptedException {
    Thread up = Thread.ofVirtual().start(() -> EgressGateway.pipe(fromClient, toUpstream, upstream));
    EgressGateway.pipe(fromUpstream, toClient, client);
    up.join(5_000);
  }
}
