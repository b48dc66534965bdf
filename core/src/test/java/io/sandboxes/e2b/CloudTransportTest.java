package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.Identity;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client reached the way E2B's cloud is, against an imitation on loopback: a TLS server whose
 * certificate a private CA (made here with the JDK's keytool) signed for E2B's host names, and a
 * {@code CONNECT} proxy that tunnels every host name to that server, recording the names asked
 * for. No traffic leaves loopback: the proxy never connects anywhere but the local TLS server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CloudTransportTest {
  private static final String PASSWORD = "test-pass";
  private static final String SANDBOX = "sbx1";
  private static final String TOKEN = "tok-cloud-1";

  /** One request the imitation saw. */
  record Seen(String method, String target, String host, Map<String, String> headers, String body) {}

  private final Queue<Seen> seen = new ConcurrentLinkedQueue<>();
  private final Queue<String> tunnels = new ConcurrentLinkedQueue<>();
  private HttpsServer server;
  private ServerSocket proxy;
  private SSLContext trustingCa;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    String hosts = "dns:localhost,dns:api.e2b.app,dns:sandbox.e2b.app,dns:api.example.test,dns:49983-" + SANDBOX
        + ".example.test,ip:127.0.0.1";
    keytool(dir, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=Sandboxes Test CA",
        "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
    keytool(dir, "-exportcert", "-alias", "ca", "-keystore", "ca.p12", "-storepass", PASSWORD, "-rfc", "-file", "ca.pem");
    keytool(dir, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
        "-validity", "2", "-keystore", "server.p12", "-storetype", "PKCS12", "-storepass", PASSWORD);
    keytool(dir, "-certreq", "-alias", "server", "-keystore", "server.p12", "-storepass", PASSWORD, "-file", "server.csr");
    keytool(dir, "-gencert", "-alias", "ca", "-keystore", "ca.p12", "-storepass", PASSWORD, "-infile", "server.csr",
        "-outfile", "server.pem", "-rfc", "-validity", "2", "-ext", "SAN=" + hosts);
    keytool(dir, "-importcert", "-alias", "ca", "-keystore", "server.p12", "-storepass", PASSWORD, "-file", "ca.pem", "-noprompt");
    keytool(dir, "-importcert", "-alias", "server", "-keystore", "server.p12", "-storepass", PASSWORD, "-file", "server.pem");

    KeyStore serverKeys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(dir.resolve("server.p12"))) {
      serverKeys.load(in, PASSWORD.toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(serverKeys, PASSWORD.toCharArray());
    SSLContext serverContext = SSLContext.getInstance("TLS");
    serverContext.init(kmf.getKeyManagers(), null, null);

    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(dir.resolve("ca.pem"))) {
      trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    trustingCa = SSLContext.getInstance("TLS");
    trustingCa.init(null, tmf.getTrustManagers(), null);

    server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(serverContext));
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", this::answer);
    server.start();

    proxy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::acceptTunnels);
  }

  @AfterAll
  void stop() throws IOException {
    if (server != null) {
      server.stop(0);
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @BeforeEach
  void forget() {
    seen.clear();
    tunnels.clear();
  }

  private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException("keytool " + String.join(" ", args) + " failed: " + out);
    }
  }

  /** E2B's control plane and envd, as far as these tests call them. */
  private void answer(HttpExchange ex) throws IOException {
    byte[] body = ex.getRequestBody().readNBytes(64 * 1024);
    Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    ex.getRequestHeaders().forEach((k, v) -> headers.put(k, String.join(",", v)));
    String target = ex.getRequestURI().toString();
    seen.add(new Seen(ex.getRequestMethod(), target, String.valueOf(headers.get("Host")), headers,
        new String(body, StandardCharsets.UTF_8)));
    String path = ex.getRequestURI().getPath();
    String sandbox = "{\"sandboxID\":\"" + SANDBOX + "\",\"templateID\":\"base\",\"clientID\":\"x\",\"envdVersion\":\"0.2.0\","
        + "\"envdAccessToken\":\"" + TOKEN + "\",\"domain\":null}";
    if (path.equals("/v2/sandboxes") && ex.getRequestMethod().equals("POST")) {
      send(ex, 201, "application/json", sandbox);
    } else if (path.equals("/v2/sandboxes/" + SANDBOX + "/connect")) {
      send(ex, 200, "application/json", sandbox);
    } else if (path.equals("/files") && ex.getRequestMethod().equals("GET")) {
      send(ex, 200, "application/octet-stream", "hello from envd");
    } else {
      send(ex, 404, "application/json", "{\"code\":404,\"message\":\"not served by this imitation: " + path + "\"}");
    }
  }

  private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** A CONNECT proxy that records the host asked for and always tunnels to the local TLS server. */
  private void acceptTunnels() {
    while (!proxy.isClosed()) {
      Socket client;
      try {
        client = proxy.accept();
      } catch (IOException closed) {
        return;
      }
      Thread.ofVirtual().start(() -> tunnel(client));
    }
  }

  private void tunnel(Socket client) {
    try (client; Socket upstream = new Socket(InetAddress.getLoopbackAddress(), server.getAddress().getPort())) {
      InputStream in = client.getInputStream();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      while (head.size() < 8192) {
        int b = in.read();
        if (b < 0) {
          return;
        }
        head.write(b);
        String h = head.toString(StandardCharsets.ISO_8859_1);
        if (h.endsWith("\r\n\r\n")) {
          break;
        }
      }
      String[] requestLine = head.toString(StandardCharsets.ISO_8859_1).split("\r\n", 2)[0].split(" ");
      if (requestLine.length < 2 || !requestLine[0].equals("CONNECT")) {
        client.getOutputStream().write("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return;
      }
      tunnels.add(requestLine[1]);
      client.getOutputStream().write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      client.getOutputStream().flush();
      Thread up = Thread.ofVirtual().start(() -> pump(in, upstream));
      pump(upstream.getInputStream(), client);
      up.join();
    } catch (IOException | InterruptedException e) {
      // the client hung up
    }
  }

  private static void pump(InputStream from, Socket to) {
    try {
      from.transferTo(to.getOutputStream());
      to.shutdownOutput();
    } catch (IOException e) {
      // one side closed
    }
  }

  private ProxySelector viaImitation() {
    return ProxySelector.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.getLocalPort()));
  }

  private static Map<String, String> onlyKey() {
    return Map.of("E2B_API_KEY", "e2b_test_key");
  }

  /** The one request of this method to this path (the query aside). */
  private Seen only(String method, String path) {
    List<Seen> matching = seen.stream().filter(s -> s.method().equals(method) && s.target().split("\\?", 2)[0].equals(path)).toList();
    assertThat(matching).as("requests %s %s among %s", method, path, seen).hasSize(1);
    return matching.get(0);
  }

  @Test
  @DisplayName("under E2B's own domain, envd traffic goes to the shared sandbox.<domain> host, routed by E2b-Sandbox-Id")
  void e2bDomainUsesSharedSandboxHost() {
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).sslContext(trustingCa).proxy(viaImitation())
        .build(); LiveSandbox sandbox = p.api().create()) {
      assertThat(new String(sandbox.readBytes("/home/user/a.txt"), StandardCharsets.UTF_8)).isEqualTo("hello from envd");

      assertThat(tunnels).containsOnly("api.e2b.app:443", "sandbox.e2b.app:443");
      Seen read = only("GET", "/files");
      assertThat(read.host()).isEqualTo("sandbox.e2b.app");
      assertThat(read.headers()).containsEntry("E2b-Sandbox-Id", SANDBOX).containsEntry("E2b-Sandbox-Port", "49983")
          .containsEntry("X-Access-Token", TOKEN).containsEntry("User-Agent", Identity.USER_AGENT);
      // as the official SDK: envd requests carry the User-Agent, not the control plane's metadata headers
      assertThat(read.headers()).doesNotContainKeys("lang", "package_version", "X-API-KEY");
    }
  }

  @Test
  @DisplayName("create and connect use the /v2 paths, and control-plane calls identify the SDK as E2B's SDKs do")
  void v2PathsAndIdentity() {
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).sslContext(trustingCa).proxy(viaImitation())
        .build()) {
      p.api().create().id();
      p.api().connect(SANDBOX, Duration.ofSeconds(90)).id();
    }
    Seen create = only("POST", "/v2/sandboxes");
    assertThat(create.target()).isEqualTo("/v2/sandboxes");
    assertThat(create.host()).isEqualTo("api.e2b.app");
    assertThat(create.body()).contains("\"templateID\":\"base\"").doesNotContain("secure");
    assertThat(Identity.USER_AGENT).matches("sandboxes-java/\\d+\\.\\d+\\.\\d+.*");
    assertThat(create.headers()).containsEntry("User-Agent", Identity.USER_AGENT).containsEntry("X-API-KEY", "e2b_test_key")
        .containsEntry("lang", "java").containsEntry("lang_version", Runtime.version().toString())
        .containsEntry("package_version", Identity.VERSION).containsEntry("publisher", "sandboxes")
        .containsEntry("sdk_runtime", "jvm").containsKey("system");
    Seen connect = only("POST", "/v2/sandboxes/" + SANDBOX + "/connect");
    assertThat(connect.body()).isEqualTo("{\"timeout\":90}");
    assertThat(seen).noneMatch(s -> s.target().startsWith("/sandboxes"));
  }

  @Test
  @DisplayName("a user's own HttpClient carries every call, a self-hosted domain gets per-sandbox hosts, and close leaves it open")
  void userHttpClient() throws Exception {
    HttpClient client = HttpClient.newBuilder().sslContext(trustingCa).proxy(viaImitation()).build();
    try (client) {
      try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).domain("example.test").httpClient(client)
          .build(); LiveSandbox sandbox = p.api().create()) {
        sandbox.readBytes("/x");
      }
      assertThat(tunnels).containsOnly("api.example.test:443", "49983-" + SANDBOX + ".example.test:443");
      assertThat(only("GET", "/files").host()).isEqualTo("49983-" + SANDBOX + ".example.test");
      assertThat(client.isTerminated()).as("the provider must not close a client it was given").isFalse();
      // still usable after the provider closed
      assertThat(client.send(java.net.http.HttpRequest.newBuilder(URI.create("https://api.example.test/health")).build(),
          java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(404);
    }
  }

  @Test
  @DisplayName("a user's SSLContext trusting a private CA reaches a TLS server on loopback; the default client refuses it")
  void privateCa() {
    URI api = URI.create("https://127.0.0.1:" + server.getAddress().getPort());
    URI envd = URI.create("https://localhost:" + server.getAddress().getPort());
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).apiUrl(api).sandboxUrl(envd)
        .sslContext(trustingCa).build(); LiveSandbox sandbox = p.api().create()) {
      assertThat(sandbox.readBytes("/x")).asString(StandardCharsets.UTF_8).isEqualTo("hello from envd");
      assertThat(only("GET", "/files").host()).isEqualTo("localhost:" + server.getAddress().getPort());
    }
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).apiUrl(api).build()) {
      assertThatThrownBy(() -> p.api().create()).isInstanceOf(SandboxException.class)
          .hasRootCauseInstanceOf(java.security.cert.CertPathBuilderException.class)
          .satisfies(e -> assertThat(causes(e)).anyMatch(SSLHandshakeException.class::isInstance));
    }
  }

  @Test
  @DisplayName("a user's executor runs the HTTP client's work and is not shut down by close")
  void userExecutor() {
    ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
    AtomicInteger tasks = new AtomicInteger();
    try (pool) {
      try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(onlyKey()).sslContext(trustingCa).proxy(viaImitation())
          .executor(task -> {
            tasks.incrementAndGet();
            pool.execute(task);
          }).build()) {
        p.api().create().id();
      }
      assertThat(tasks).hasPositiveValue();
      assertThat(pool.isShutdown()).isFalse();
    }
  }

  @Test
  @DisplayName("an HttpClient together with parts of the provider's own client is refused at build, naming them")
  void mixedTransportRefused() {
    try (HttpClient client = HttpClient.newHttpClient()) {
      assertThatThrownBy(() -> E2BSandboxProvider.builder().environment(onlyKey()).httpClient(client).sslContext(trustingCa)
          .proxy(viaImitation()).build()).isInstanceOf(IllegalStateException.class).hasMessageContaining("sslContext, proxy");
    }
  }

  private static List<Throwable> causes(Throwable t) {
    List<Throwable> out = new ArrayList<>();
    for (Throwable c = t; c != null && !out.contains(c); c = c.getCause()) {
      out.add(c);
    }
    return out;
  }
}
