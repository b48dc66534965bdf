package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.ScriptedServer.Answer;
import io.sandboxes.e2b.ScriptedServer.Request;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The network, lifecycle and resume fields on the wire, against a {@link ScriptedServer} that
 * records each request's body. The local server serves allowOut, denyOut,
 * allowInternetAccess and allowPublicTraffic (tested against it in the local module); it refuses
 * {@code rules} and a cold-boot resume and drops {@code maskRequestHost}, so those are E2B's
 * cloud's and are checked here in the form E2B's SDK 2.51 sends them.
 */
class NetworkWireTest {
  private static final String KEY = "e2b_network0123456789abcdef";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SANDBOX = "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"envdVersion\":\"0.2.0\","
      + "\"envdAccessToken\":\"tok\",\"domain\":null}";

  private final ConcurrentLinkedQueue<String> answers = new ConcurrentLinkedQueue<>();
  private ScriptedServer server;
  private List<Request> seen;
  private E2BSandboxProvider provider;

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> {
      String a = answers.poll();
      return r.method().equals("PUT") || r.method().equals("DELETE") ? Answer.empty(204) : Answer.json(200, a == null ? SANDBOX : a);
    });
    seen = server.requests();
    provider = provider(List.of());
  }

  private E2BSandboxProvider provider(List<String> defaultAllowOut) {
    URI url = server.url();
    return E2BSandboxProvider.builder().apiUrl(url).sandboxUrl(url).apiKey(KEY).environment(Map.of())
        .defaultAllowOut(defaultAllowOut).build();
  }

  @AfterEach
  void stop() {
    provider.close();
    server.close();
  }

  private Request only(String method, String path) {
    List<Request> r = server.requests(method, path);
    assertThat(r).as(method + " " + path + " among " + seen).hasSize(1);
    return r.get(0);
  }

  @Test
  @DisplayName("every network field and the lifecycle go in the create request, in E2B 2.51's names, and nothing follows it")
  void createCarriesTheNetwork() throws Exception {
    SandboxNetwork n = SandboxNetwork.allowOnly("api.example.com", "10.1.0.0/16")
        .withRule("api.example.com", Map.of("Authorization", "Bearer s3cret"))
        .withAllowInternetAccess(false).withAllowPublicTraffic(false).withMaskRequestHost("${PORT}-app.example.com");
    provider.api().create(SandboxSpec.of("base").withNetwork(n).withOnTimeout(OnTimeout.PAUSE_FILESYSTEM));
    assertThat(seen).hasSize(1);
    JsonNode body = only("POST", "/v2/sandboxes").json();
    assertThat(body.get("allow_internet_access").booleanValue()).isFalse();
    assertThat(body.get("network")).isEqualTo(JSON.readTree("""
        {"allowOut":["api.example.com","10.1.0.0/16"],"denyOut":["0.0.0.0/0"],
         "rules":{"api.example.com":[{"transform":{"headers":{"Authorization":"Bearer s3cret"}}}]},
         "allowPublicTraffic":false,"maskRequestHost":"${PORT}-app.example.com"}"""));
    assertThat(body.get("autoPause").booleanValue()).isTrue();
    assertThat(body.get("autoPauseMemory").booleanValue()).isFalse();
    assertThat(body.has("autoResume")).isFalse();
  }

  @Test
  @DisplayName("without a network the create says nothing of it, so the server's default applies")
  void createWithoutNetwork() {
    provider.api().create(SandboxSpec.of("base"));
    JsonNode body = only("POST", "/v2/sandboxes").json();
    assertThat(body.has("network")).isFalse();
    assertThat(body.has("allow_internet_access")).isFalse();
  }

  @Test
  @DisplayName("the provider's default allow-list is sent deny-by-default in the create request, with no update after it")
  void providerAllowListAtCreate() throws Exception {
    provider.close();
    provider = provider(List.of("pypi.org"));
    provider.create(io.sandboxes.SandboxConfig.forProject("p1")).close();
    JsonNode body = only("POST", "/v2/sandboxes").json();
    assertThat(body.get("network")).isEqualTo(JSON.readTree("{\"allowOut\":[\"pypi.org\"],\"denyOut\":[\"0.0.0.0/0\"]}"));
    assertThat(seen).noneMatch(r -> r.path().endsWith("/network"));
    assertThatThrownBy(() -> provider(List.of("not a host!"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("allowOut");
  }

  @Test
  @DisplayName("an update sends allowOut, denyOut, rules and allow_internet_access; create-only fields are refused before any request")
  void update() throws Exception {
    LiveSandbox s = provider.api().create(SandboxSpec.of("base"));
    s.network().update(SandboxNetwork.defaults().withDenyOut(List.of("10.0.0.0/8")).withAllowInternetAccess(true)
        .withRule("*.example.com", Map.of("X-Team", "infra")));
    assertThat(only("PUT", "/sandboxes/sbx1/network").json()).isEqualTo(JSON.readTree("""
        {"denyOut":["10.0.0.0/8"],"rules":{"*.example.com":[{"transform":{"headers":{"X-Team":"infra"}}}]},
         "allow_internet_access":true}"""));
    int before = seen.size();
    assertThatThrownBy(() -> s.network().update(SandboxNetwork.defaults().withMaskRequestHost("h.example.com")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fixed when the sandbox is created");
    assertThatThrownBy(() -> s.network().update(SandboxNetwork.defaults().withAllowPublicTraffic(false)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(seen).hasSize(before);
  }

  @Test
  @DisplayName("info reads the network back with allowInternetAccess; no header value or proxy password is ever printed")
  void infoReadsTheNetwork() {
    answers.add("""
        {"sandboxID":"sbx1","templateID":"base","state":"running","envdVersion":"0.2.0","startedAt":"2026-01-01T00:00:00Z","endAt":"2026-01-01T00:05:00Z","allowInternetAccess":false,
         "network":{"allowOut":["api.example.com"],"denyOut":["0.0.0.0/0"],"allowPublicTraffic":false,
           "maskRequestHost":"${PORT}-app.example.com",
           "rules":{"api.example.com":[{"transform":{"headers":{"Authorization":"Bearer s3cret"}}}]},
           "egressProxy":{"address":"proxy.example.com:1080","username":"u","password":"pr0xy-pass"}}}""");
    SandboxInfo info = provider.api().info("sbx1");
    SandboxNetwork n = info.network();
    assertThat(n).isNotNull();
    assertThat(n.allowOut()).containsExactly("api.example.com");
    assertThat(n.denyOut()).containsExactly(SandboxNetwork.ALL_TRAFFIC);
    assertThat(n.allowInternetAccess()).isFalse();
    assertThat(n.allowPublicTraffic()).isFalse();
    assertThat(n.maskRequestHost()).isEqualTo("${PORT}-app.example.com");
    assertThat(n.rules().get("api.example.com")).singleElement()
        .satisfies(r -> assertThat(r.headers()).containsEntry("Authorization", "Bearer s3cret"));
    assertThat(info.toString()).contains("Authorization").doesNotContain("s3cret").doesNotContain("pr0xy-pass");
  }

  @Test
  @DisplayName("a record that says nothing of the network reads as none, not as an empty policy")
  void infoWithoutNetwork() {
    answers.add("{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"running\",\"envdVersion\":\"0.2.0\","
        + "\"startedAt\":\"2026-01-01T00:00:00Z\",\"endAt\":\"2026-01-01T00:05:00Z\"}");
    assertThat(provider.api().info("sbx1").network()).isNull();
  }

  @Test
  @DisplayName("connect says how to resume (memory:false for a cold boot, nothing for a restore); pause says whether to keep memory")
  void resumeAndPause() {
    LiveSandbox s = provider.api().create(SandboxSpec.of("base"));
    s.connect(Duration.ofMinutes(2), OnResume.REBOOT);
    s.connect(Duration.ofMinutes(3), OnResume.RESTORE);
    List<Request> connects = seen.stream().filter(r -> r.path().equals("/v2/sandboxes/sbx1/connect")).toList();
    assertThat(connects).extracting(r -> r.json().toString())
        .containsExactly("{\"timeout\":120,\"memory\":false}", "{\"timeout\":180}");
    s.pause(false);
    assertThat(only("POST", "/sandboxes/sbx1/pause").json().toString()).isEqualTo("{\"memory\":false}");
  }

  @Test
  @DisplayName("the domain and traffic token of a create answer are the handle's; info reads the lifecycle and domain, and refuses an action it does not know")
  void domainTokenAndLifecycle() {
    answers.add("{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"envdVersion\":\"0.2.0\",\"envdAccessToken\":\"tok\","
        + "\"trafficAccessToken\":\"ttok\",\"domain\":\"eu.example.dev\"}");
    LiveSandbox s = provider.api().create(SandboxSpec.of("base"));
    assertThat(s.sandboxDomain()).isEqualTo("eu.example.dev");
    assertThat(s.trafficAccessToken()).isEqualTo("ttok");
    LiveSandbox plain = provider.api().create(SandboxSpec.of("base"));
    assertThat(plain.trafficAccessToken()).as("an answer without a token: the ports are public").isNull();
    assertThat(plain.sandboxDomain()).as("no domain in the answer: the client's").isEqualTo("e2b.app");

    String record = "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"paused\",\"envdVersion\":\"0.2.0\","
        + "\"startedAt\":\"2026-01-01T00:00:00Z\",\"endAt\":\"2026-01-01T00:05:00Z\",%s}";
    answers.add(record.formatted("\"domain\":\"eu.example.dev\",\"lifecycle\":{\"onTimeout\":\"pause\",\"autoResume\":true}"));
    SandboxInfo info = provider.api().info("sbx1");
    assertThat(info.lifecycle()).isEqualTo(new io.sandboxes.SandboxLifecycle(true, true));
    assertThat(info.sandboxDomain()).isEqualTo("eu.example.dev");
    answers.add(record.formatted("\"domain\":\"\",\"lifecycle\":{\"onTimeout\":\"kill\",\"autoResume\":false}"));
    info = provider.api().info("sbx1");
    assertThat(info.lifecycle()).isEqualTo(new io.sandboxes.SandboxLifecycle(false, false));
    assertThat(info.sandboxDomain()).as("an empty domain is none, as E2B's SDK reads it").isNull();
    answers.add(record.formatted("\"lifecycle\":null"));
    assertThat(provider.api().info("sbx1").lifecycle()).isNull();
    answers.add(record.formatted("\"lifecycle\":{\"onTimeout\":\"hibernate\",\"autoResume\":false}"));
    assertThatThrownBy(() -> provider.api().info("sbx1")).isInstanceOf(io.sandboxes.SandboxException.class)
        .hasMessageContaining("hibernate");
    answers.add(record.formatted("\"lifecycle\":{\"onTimeout\":\"kill\"}"));
    assertThatThrownBy(() -> provider.api().info("sbx1")).isInstanceOf(io.sandboxes.SandboxException.class);
  }

  @Test
  @DisplayName("Secret.fill's placeholder goes into a rule's header value verbatim, at create and in an update, and is never printed")
  void secretFillInRules() throws Exception {
    SandboxNetwork n = SandboxNetwork.allowOnly("api.openai.com")
        .withRule("api.openai.com", Map.of("Authorization", "Bearer " + E2BSecrets.fill("openai-key")));
    LiveSandbox s = provider.api().create(SandboxSpec.of("base").withNetwork(n));
    assertThat(only("POST", "/v2/sandboxes").json().at("/network/rules/api.openai.com/0/transform/headers/Authorization").asText())
        .isEqualTo("Bearer ${e2b.secrets.openai-key}");
    s.network().update(n);
    assertThat(only("PUT", "/sandboxes/sbx1/network").json().at("/rules/api.openai.com/0/transform/headers/Authorization").asText())
        .isEqualTo("Bearer ${e2b.secrets.openai-key}");
    assertThat(n.toString()).doesNotContain("e2b.secrets");
  }

  @Test
  @DisplayName("egressProxy goes in the create and the update as E2B 2.51 sends it, password included; read back it has none, and it is never printed")
  void egressProxyOnTheWire() throws Exception {
    SandboxNetwork n = SandboxNetwork.allowOnly("api.example.com")
        .withEgressProxy(io.sandboxes.EgressProxy.of("proxy.example.com:1080", "proxy-user", "pr0xy-s3cret"));
    LiveSandbox s = provider.api().create(SandboxSpec.of("base").withNetwork(n));
    assertThat(only("POST", "/v2/sandboxes").json().get("network").get("egressProxy")).isEqualTo(JSON.readTree(
        "{\"address\":\"proxy.example.com:1080\",\"username\":\"proxy-user\",\"password\":\"pr0xy-s3cret\"}"));
    s.network().update(SandboxNetwork.allowOnly("api.example.com").withEgressProxy(io.sandboxes.EgressProxy.of("10.0.0.1:1080")));
    assertThat(only("PUT", "/sandboxes/sbx1/network").json().get("egressProxy")).isEqualTo(JSON.readTree(
        "{\"address\":\"10.0.0.1:1080\"}"));
    assertThat(n.toString()).contains("proxy.example.com:1080").doesNotContain("pr0xy-s3cret");

    answers.add("""
        {"sandboxID":"sbx1","templateID":"base","state":"running","envdVersion":"0.2.0","startedAt":"2026-01-01T00:00:00Z","endAt":"2026-01-01T00:05:00Z",
         "network":{"egressProxy":{"address":"proxy.example.com:1080","username":"proxy-user","password":"leaked"}}}""");
    SandboxNetwork read = provider.api().info("sbx1").network();
    assertThat(read).isNotNull();
    assertThat(read.egressProxy()).isEqualTo(new io.sandboxes.EgressProxy("proxy.example.com:1080", "proxy-user", null));

    assertThatThrownBy(() -> io.sandboxes.EgressProxy.of("no-port")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> io.sandboxes.EgressProxy.of("host:70000")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new io.sandboxes.EgressProxy("host:1080", null, "pw")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> io.sandboxes.EgressProxy.of("host:1080", "u", "x".repeat(256))).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("bad network input is refused with a message naming the field")
  void badInput() {
    assertThatThrownBy(() -> SandboxNetwork.allowOnly("bad host")).hasMessageContaining("allowOut");
    assertThatThrownBy(() -> SandboxNetwork.defaults().withDenyOut(List.of("example.com"))).hasMessageContaining("denyOut");
    assertThatThrownBy(() -> SandboxNetwork.defaults().withRule("api.example.com", Map.of("Bad Header", "x")))
        .hasMessageContaining("header name");
    assertThatThrownBy(() -> SandboxNetwork.defaults().withRule("api.example.com", Map.of("X", "a\r\nB: c")))
        .hasMessageContaining("one line");
    assertThatThrownBy(() -> SandboxNetwork.defaults().withMaskRequestHost("a b")).hasMessageContaining("maskRequestHost");
    assertThatThrownBy(() -> PtyOptions.of(0, 24)).hasMessageContaining("cols and rows");
  }
}
