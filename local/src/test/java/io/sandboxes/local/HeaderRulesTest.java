package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.E2BSecrets;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.egress.GatewayCa;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Header rules through the egress gateway, from inside real sandboxes on a server of its own.
 * The destinations are witnesses this test runs on loopback (two over TLS, with a certificate of
 * the test's own CA, which the server is given as an extra CA; one over plain HTTP), which the
 * server's gateway answers for their names as it does its own witnesses': nothing is aimed at
 * any other address.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class HeaderRulesTest {
  private static final String RULED = "ruled.witness.sandboxes.test";
  private static final String PLAIN = "plain.witness.sandboxes.test";
  private static final String HTTP = "http.witness.sandboxes.test";
  private static final String GATEWAY_CA = "CN=Sandboxes egress gateway CA";
  private static final String TEST_CA = "CN=Header rules test CA";

  private static GatewayCa testCa;
  private static Witness ruled;
  private static Witness plain;
  private static Witness http;
  private static Path caFile;
  private static LocalServer server;
  private static E2BSandboxProvider provider;

  /** A destination on loopback that keeps the heads of the requests it is sent. */
  private record Witness(String name, HttpServer server, List<Map<String, List<String>>> seen) {
    static Witness start(String name, boolean tls) throws Exception {
      InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
      HttpServer s;
      if (tls) {
        HttpsServer https = HttpsServer.create(at, 50);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("w", testCa.leafKey(), new char[0], new X509Certificate[] {testCa.leaf(name), testCa.certificate()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        https.setHttpsConfigurator(new HttpsConfigurator(ctx));
        s = https;
      } else {
        s = HttpServer.create(at, 50);
      }
      List<Map<String, List<String>>> seen = new CopyOnWriteArrayList<>();
      s.createContext("/", ex -> {
        Map<String, List<String>> head = new TreeMap<>();
        ex.getRequestHeaders().forEach((k, v) -> head.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
        head.put(":path", List.of(ex.getRequestURI().getPath()));
        seen.add(head);
        byte[] body = ("witness " + name + "\n").getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
        ex.close();
      });
      s.start();
      return new Witness(name, s, seen);
    }

    InetSocketAddress address() {
      return server.getAddress();
    }

    Map<String, List<String>> last(String path) {
      return seen.stream().filter(h -> h.get(":path").equals(List.of(path))).reduce((a, b) -> b)
          .orElseThrow(() -> new AssertionError(name + " saw no request for " + path + "; it saw " + seen));
    }
  }

  @BeforeAll
  static void start() throws Exception {
    testCa = GatewayCa.create("Header rules test CA");
    ruled = Witness.start(RULED, true);
    plain = Witness.start(PLAIN, true);
    http = Witness.start(HTTP, false);
    caFile = Files.createTempFile("header-rules-ca-", ".pem");
    Files.writeString(caFile, GatewayCa.pem(testCa.certificate()));
    LocalServer.Builder b = TestRuntime.builder().warmPool(1);
    b.extraCaCerts = caFile;
    for (Witness w : List.of(ruled, plain, http)) {
      b.egressNamesForTesting.put(w.name(), w.address());
    }
    server = b.build().start();
    provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
  }

  @AfterAll
  static void stop() throws Exception {
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
    for (Witness w : new Witness[] {ruled, plain, http}) {
      if (w != null) {
        w.server().stop(0);
      }
    }
    if (caFile != null) {
      Files.deleteIfExists(caFile);
    }
  }

  private static String raw(String path) throws Exception {
    try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      return c.send(HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey()).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    }
  }

  @Test
  @DisplayName("a rule's headers reach its destination, secret filled in, over TLS the sandbox trusts; the sandbox never sees the secret")
  void headersAdded() throws Exception {
    E2BApi api = provider.api();
    String name = "rules-" + UUID.randomUUID().toString().substring(0, 8);
    String value = "sk-local-" + UUID.randomUUID();
    api.secrets().create(name, value);
    SandboxNetwork net = SandboxNetwork.allowOnly(RULED, PLAIN, HTTP)
        .withRule(RULED, Map.of("Authorization", "Bearer " + E2BSecrets.fill(name), "X-Static", "one"))
        .withRule(RULED, Map.of("X-Static", "two"))
        .withRule(HTTP, Map.of("X-Key", E2BSecrets.fill(name)));
    try (LiveSandbox s = api.create(SandboxSpec.defaults().withNetwork(net))) {
      // TLS to a destination with rules: the gateway's leaf, trusted without -k; the sandbox's own Authorization is replaced
      String tls = s.exec("curl -sS -v -m 20 -H 'Authorization: Bearer mine' https://" + RULED + "/curl 2>&1").stdout();
      assertThat(tls).contains("witness " + RULED).contains("issuer: " + GATEWAY_CA).doesNotContain(value);
      Map<String, List<String>> seen = ruled.last("/curl");
      assertThat(seen.get("authorization")).containsExactly("Bearer " + value);
      assertThat(seen.get("x-static")).containsExactly("two");
      // Python's own TLS (SSL_CERT_FILE, the system bundle) trusts it as well
      String py = s.exec("python3 -c \"import urllib.request; print(urllib.request.urlopen('https://" + RULED
          + "/python', timeout=20).read().decode())\" 2>&1").stdout();
      assertThat(py).contains("witness " + RULED);
      assertThat(ruled.last("/python").get("authorization")).containsExactly("Bearer " + value);
      // plain HTTP to a destination with rules gets them too
      assertThat(s.exec("curl -sS -m 20 http://" + HTTP + "/plain 2>&1").stdout()).contains("witness " + HTTP);
      assertThat(http.last("/plain").get("x-key")).containsExactly(value);
      // a destination without rules is not intercepted: the sandbox sees the witness's own certificate (an extra CA it trusts)
      String through = s.exec("curl -sS -v -m 20 -H 'Authorization: Bearer mine' https://" + PLAIN + "/through 2>&1").stdout();
      assertThat(through).contains("witness " + PLAIN).contains("issuer: " + TEST_CA).doesNotContain(GATEWAY_CA);
      assertThat(plain.last("/through").get("authorization")).containsExactly("Bearer mine");
      // nowhere in the sandbox: its environment, every process's, its files; nor the CA's key
      String inside = s.exec("env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; "
          + "grep -rIl -- '" + value + "' / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; "
          + "grep -rl 'PRIVATE KEY' /etc/ssl /usr/local/share 2>/dev/null; echo done").stdout();
      assertThat(inside).contains("done").doesNotContain(value).doesNotContain("PRIVATE KEY");
      // nor in an answer: the rule is reported with its placeholder, as E2B does
      assertThat(s.info().network().rules().get(RULED).get(0).headers().get("Authorization")).isEqualTo("Bearer " + E2BSecrets.fill(name));
      String detail = raw("/sandboxes/" + s.id());
      assertThat(detail).contains("${e2b.secrets." + name + "}").doesNotContain(value);
      assertThat(raw("/v2/sandboxes/" + s.id() + "/logs")).doesNotContain(value);
    }
  }

  @Test
  @DisplayName("from inside: a name with rules asked for through a tunnel to one without is not intercepted, and rules open nothing")
  void attacks() throws Exception {
    E2BApi api = provider.api();
    String name = "rules-" + UUID.randomUUID().toString().substring(0, 8);
    String value = "sk-local-" + UUID.randomUUID();
    api.secrets().create(name, value);
    SandboxNetwork net = SandboxNetwork.allowOnly(RULED, PLAIN)
        .withRule(RULED, Map.of("Authorization", "Bearer " + E2BSecrets.fill(name)))
        .withRule("denied.witness.sandboxes.test", Map.of("Authorization", "Bearer " + E2BSecrets.fill(name)));
    try (LiveSandbox s = api.create(SandboxSpec.defaults().withNetwork(net))) {
      // a tunnel to the rule-less destination, with the ruled name in its SNI: the gateway signs nothing, the witness answers
      String sni = s.exec("echo | openssl s_client -proxy \"${HTTPS_PROXY#http://}\" -connect " + PLAIN + ":443 -servername " + RULED
          + " 2>&1 | grep -i 'issuer'").stdout();
      assertThat(sni).contains("Header rules test CA").doesNotContain("egress gateway");
      // rules for a destination the policy does not allow do not open it
      assertThat(s.exec("curl -s -o /dev/null -m 20 -w '%{http_connect}' https://denied.witness.sandboxes.test/").stdout())
          .isEqualTo("403");
      // tunnels to the ruled destination that never start TLS: the gateway holds at most its cap of them, then serves again
      String flood = """
          import os, socket, time
          host, port = os.environ["HTTPS_PROXY"][len("http://"):].split(":")
          socks = []
          for _ in range(300):
              c = socket.create_connection((host, int(port)), timeout=10)
              c.sendall(b"CONNECT %s:443 HTTP/1.1\\r\\nHost: %s:443\\r\\n\\r\\n")
              socks.append(c)
          time.sleep(2)
          opened = told = 0
          for c in socks:
              c.setblocking(False)
              try:
                  head = c.recv(64)
                  opened += head.startswith(b"HTTP/1.1 200")
                  told += head.startswith(b"HTTP/1.1 429")
              except OSError:
                  pass
          print(opened, told)
          for c in socks:
              c.close()
          """.formatted(RULED, RULED);
      io.sandboxes.ExecResult r = s.exec("python3 -c '" + flood.replace("'", "'\\''") + "'");
      assertThat(r.exitCode()).as(r.stderr()).isZero();
      String[] counts = r.stdout().strip().split(" ");
      assertThat(Integer.parseInt(counts[0])).as("tunnels the gateway held open").isBetween(1, 256);
      assertThat(Integer.parseInt(counts[1])).as("tunnels told 429").isGreaterThanOrEqualTo(300 - 256);
      await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
          assertThat(s.exec("curl -sS -m 20 https://" + RULED + "/after-flood 2>&1").stdout()).contains("witness " + RULED));
      // a secret deleted after the create: the gateway does not send the request
      api.secrets().destroy(name);
      String gone = s.exec("curl -sS -m 20 https://" + RULED + "/gone 2>&1").stdout();
      assertThat(gone).contains("no longer exists").doesNotContain("witness " + RULED);
      assertThat(ruled.seen()).noneMatch(h -> h.get(":path").equals(List.of("/gone")));
    }
    // a rule naming a secret that does not exist is refused, at create and on update, naming it
    String missing = "no-such-" + UUID.randomUUID().toString().substring(0, 8);
    SandboxNetwork bad = SandboxNetwork.allowOnly(RULED).withRule(RULED, Map.of("X-Key", E2BSecrets.fill(missing)));
    assertThatThrownBy(() -> api.create(SandboxSpec.defaults().withNetwork(bad))).isInstanceOfSatisfying(SandboxApiException.class,
        e -> assertThat(e.serverMessage()).contains("secret '" + missing + "', which does not exist"));
    try (LiveSandbox s = api.create()) {
      assertThatThrownBy(() -> api.updateNetwork(s.id(), bad)).isInstanceOfSatisfying(SandboxApiException.class,
          e -> assertThat(e.serverMessage()).contains("secret '" + missing + "', which does not exist"));
    }
  }

  @Test
  @DisplayName("a restarted server's new CA is written into the sandboxes it takes back, replacing the old one, and rules keep working")
  void newCaAfterRestart() throws Exception {
    String serverId = "rules-" + UUID.randomUUID().toString().substring(0, 8);
    Path state = Files.createTempDirectory("sandboxes-state-");
    LocalServer.Builder b = TestRuntime.builder().serverId(serverId).stateDir(state).keepSandboxesOnClose(true).warmPool(0)
        .apiKey("e2b_" + UUID.randomUUID().toString().replace("-", ""));
    b.extraCaCerts = caFile;
    b.egressNamesForTesting.put(RULED, ruled.address());
    String fingerprint = "openssl x509 -noout -fingerprint -in /usr/local/share/ca-certificates/sandboxes-egress.crt; "
        + "grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt";
    String id;
    String before;
    try {
      try (LocalServer first = b.build().start(); E2BSandboxProvider c = E2BSandboxProvider.builder().apiUrl(first.apiUrl())
          .sandboxUrl(first.sandboxUrl()).apiKey(first.apiKey()).build()) {
        c.api().secrets().create("restart-key", "restart-value");
        LiveSandbox s = c.api().create(SandboxSpec.defaults().withNetwork(SandboxNetwork.allowOnly(RULED)
            .withRule(RULED, Map.of("X-Key", E2BSecrets.fill("restart-key")))));
        id = s.id();
        assertThat(s.exec("curl -sS -m 20 https://" + RULED + "/before-restart 2>&1").stdout()).contains("witness " + RULED);
        before = s.exec(fingerprint).stdout();
      }
      b.keepSandboxesOnClose(false);
      try (LocalServer again = b.build().start(); E2BSandboxProvider c = E2BSandboxProvider.builder().apiUrl(again.apiUrl())
          .sandboxUrl(again.sandboxUrl()).apiKey(again.apiKey()).build()) {
        LiveSandbox s = c.api().connect(id);
        String after = s.exec(fingerprint).stdout();
        assertThat(after.lines().toList().get(0)).as("a new CA").isNotEqualTo(before.lines().toList().get(0));
        assertThat(after.lines().toList().get(1)).as("the old CA replaced, not added to").isEqualTo(before.lines().toList().get(1));
        assertThat(s.exec("curl -sS -m 20 https://" + RULED + "/after-restart 2>&1").stdout()).contains("witness " + RULED);
        assertThat(ruled.last("/after-restart").get("x-key")).containsExactly("restart-value");
        s.kill();
      }
    } finally {
      try (var files = Files.walk(state)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
      try (io.sandboxes.local.internal.docker.DockerRuntime docker = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
        docker.listOurs().stream().filter(k -> serverId.equals(k.getLabels().get(io.sandboxes.local.internal.docker.DockerRuntime.LABEL_SERVER)))
            .forEach(k -> docker.remove(k.getId()));
      }
    }
  }
}
