package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.ScriptedServer.Answer;
import io.sandboxes.e2b.ScriptedServer.Request;
import io.sandboxes.e2b.internal.Identity;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Per-call settings and the integration tag on the wire, against a {@link ScriptedServer}: the
 * headers and keys each request carries are what is checked, which the local server does not
 * show (the local module's AccountsTest checks a second key against it).
 */
class CallOptionsWireTest {
  private static final String KEY = "e2b_calloptions0123456789abcdef";
  private static final String OTHER_KEY = "e2b_otheraccount0123456789abcdef";
  private static final String SANDBOX = "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"envdVersion\":\"0.2.0\","
      + "\"envdAccessToken\":\"tok\",\"domain\":null}";

  private ScriptedServer server;
  private E2BSandboxProvider provider;

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> r.method().equals("DELETE") ? Answer.empty(204)
        : Answer.json(200, r.path().equals("/v2/sandboxes") && r.method().equals("GET") ? "[]" : SANDBOX));
    provider = E2BSandboxProvider.builder().apiUrl(server.url()).sandboxUrl(server.url()).apiKey(KEY).environment(Map.of())
        .integration("my-agent/1.2 planner").build();
  }

  @AfterEach
  void stop() {
    provider.close();
    server.close();
  }

  private Request last() {
    List<Request> all = server.requests();
    return all.get(all.size() - 1);
  }

  @Test
  @DisplayName("a view's key, headers and domain go with its calls and its sandboxes' calls, and leave the provider's own calls as they were")
  void perCallKeyHeadersAndDomain() {
    E2BApi view = provider.api().with(CallOptions.defaults().withApiKey(OTHER_KEY).withHeader("X-Request-Id", "run-42")
        .withDomain("eu.example.dev"));
    LiveSandbox s = view.create(SandboxSpec.of("base"));
    Request create = last();
    assertThat(create.line()).as("an API URL of the provider's own stays: the request reached it").isEqualTo("POST /v2/sandboxes");
    assertThat(create.header("X-API-KEY")).isEqualTo(OTHER_KEY);
    assertThat(create.header("X-Request-Id")).isEqualTo("run-42");
    assertThat(s.sandboxDomain()).as("an answer without a domain: the view's").isEqualTo("eu.example.dev");
    s.kill();
    assertThat(last().line()).isEqualTo("DELETE /sandboxes/sbx1");
    assertThat(last().header("X-API-KEY")).as("the handle's own calls keep the view's key").isEqualTo(OTHER_KEY);
    assertThat(last().header("X-Request-Id")).isEqualTo("run-42");

    provider.api().list(SandboxQuery.all());
    assertThat(last().header("X-API-KEY")).isEqualTo(KEY);
    assertThat(last().headers().containsKey("X-Request-Id")).as("the provider's calls carry no view header").isFalse();

    // views stack: a later header of the same name (any case) replaces the earlier
    view.with(CallOptions.defaults().withHeader("x-request-id", "run-43")).list(SandboxQuery.all());
    assertThat(last().headers().get("X-Request-Id")).containsExactly("run-43");
    assertThat(last().header("X-API-KEY")).isEqualTo(OTHER_KEY);
  }

  @Test
  @DisplayName("the integration tag follows the client's own name in every request's User-Agent; a header given for the call replaces it")
  void integrationTag() {
    provider.api().list(SandboxQuery.all());
    assertThat(last().header("User-Agent")).isEqualTo(Identity.USER_AGENT + " my-agent/1.2 planner");
    provider.api().with(CallOptions.defaults().withHeader("User-Agent", "custom/1")).list(SandboxQuery.all());
    assertThat(last().headers().get("User-Agent")).containsExactly("custom/1");
    assertThatThrownBy(() -> E2BSandboxProvider.builder().integration("bad\r\nX-Injected: 1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> E2BSandboxProvider.builder().integration("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> E2BSandboxProvider.builder().integration("two  spaces")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("a domain moves a control plane that was derived from the domain to https://api.<domain>")
  void domainMovesTheDerivedApiUrl() {
    try (E2BSandboxProvider derived = E2BSandboxProvider.builder().apiKey(KEY).environment(Map.of()).domain("e2b.app")
        .requestTimeout(Duration.ofSeconds(5)).retries(0).build()) {
      assertThatThrownBy(() -> derived.api().with(CallOptions.defaults().withDomain("acct.invalid")).info("sbx1"))
          .isInstanceOf(SandboxException.class).hasMessageContaining("https://api.acct.invalid/");
    }
  }

  @Test
  @DisplayName("headers the client sets itself, malformed names and multi-line values are refused before anything is sent; toString shows no secret")
  void refusals() {
    CallOptions o = CallOptions.defaults();
    assertThatThrownBy(() -> o.withHeader("X-API-KEY", "k")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("withApiKey");
    assertThatThrownBy(() -> o.withHeader("x-api-key", "k")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withHeader("Host", "evil")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withHeader("Bad Name", "v")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withHeader("X-Ok", "a\r\nX-Injected: 1")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withApiKey(" ")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withApiKey("a\nb")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withDomain("http://x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withRequestTimeout(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> o.withRetries(-1)).isInstanceOf(IllegalArgumentException.class);
    CallOptions set = o.withApiKey(OTHER_KEY).withHeader("X-Secret-Ish", "hidden-value-123");
    assertThat(set.toString()).doesNotContain(OTHER_KEY).doesNotContain("hidden-value-123").contains("X-Secret-Ish");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  @DisplayName("timeout and retries set through the options are the view's")
  void timeoutAndRetries() {
    E2BApi view = provider.api().with(CallOptions.defaults().withRequestTimeout(Duration.ofSeconds(7)).withRetries(1));
    assertThat(view.requestTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(view.retries()).isEqualTo(1);
    assertThat(provider.api().with(CallOptions.defaults())).as("no change, no new view").isSameAs(provider.api());
  }
}
