package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxAuthenticationException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * E2B's secrets API on the wire, against a {@link ScriptedServer}:
 * the local server does not serve {@code /secrets}, so requests and answers are those of E2B's
 * SDK 2.51 and its OpenAPI description.
 */
class SecretsWireTest {
  private static final String KEY = "e2b_secrets0123456789abcdef";
  private static final String VALUE = "sk-live-value-0123456789";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SECRET = """
      {"secretID":"sec_1","name":"openai-key","currentVersion":%d,"metadata":{"team":"ml"},
       "createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-03T03:04:05Z"}""";

  /** A scripted answer: a status, a body (null for none) and the next-page token to send, if any. */
  record Answer(int status, String body, String nextToken) {}

  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  private ScriptedServer server;
  private E2BSandboxProvider provider;

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> {
      String key = r.lineWithQuery();
      Answer a = answers.getOrDefault(key, new Answer(500, "{\"code\":500,\"message\":\"unscripted " + key + "\"}", null));
      String[] headers = a.nextToken() == null ? new String[0] : new String[] {"X-Next-Token", a.nextToken()};
      return a.body() == null ? ScriptedServer.Answer.empty(a.status()) : ScriptedServer.Answer.json(a.status(), a.body(), headers);
    });
    provider = E2BSandboxProvider.builder().apiUrl(server.url()).sandboxUrl(server.url()).apiKey(KEY).environment(Map.of())
        .retries(0).build();
  }

  @AfterEach
  void stop() {
    provider.close();
    server.close();
  }

  private ScriptedServer.Request last() {
    return server.requests().get(server.requests().size() - 1);
  }

  @Test
  @DisplayName("create, update, get, exists, list by pages and destroy send E2B's paths and bodies with the API key and read Secret")
  void secretsOnTheWire() throws Exception {
    E2BSecrets secrets = provider.api().secrets();
    answers.put("POST /secrets", new Answer(201, SECRET.formatted(1), null));
    SecretInfo made = secrets.create("openai-key", VALUE, Map.of("team", "ml"));
    assertThat(last().header("X-API-KEY")).isEqualTo(KEY);
    assertThat(last().json()).isEqualTo(JSON.readTree("{\"name\":\"openai-key\",\"value\":\"" + VALUE + "\",\"metadata\":{\"team\":\"ml\"}}"));
    assertThat(made).isEqualTo(new SecretInfo("sec_1", "openai-key", 1, Map.of("team", "ml"),
        Instant.parse("2026-01-02T03:04:05Z"), Instant.parse("2026-01-03T03:04:05Z")));
    secrets.create("openai-key", VALUE);
    assertThat(last().json().has("metadata")).as("no metadata sent when none given").isFalse();

    answers.put("POST /secrets/openai-key", new Answer(200, SECRET.formatted(2), null));
    assertThat(secrets.update("openai-key", "v2-value-abcdefgh", null).version()).isEqualTo(2);
    assertThat(last().path()).isEqualTo("/secrets/openai-key");
    assertThat(last().json()).isEqualTo(JSON.readTree("{\"value\":\"v2-value-abcdefgh\"}"));

    answers.put("GET /secrets/sec_1", new Answer(200, SECRET.formatted(2), null));
    assertThat(secrets.getInfo("sec_1").version()).isEqualTo(2);
    assertThat(secrets.exists("sec_1")).isTrue();

    answers.put("GET /secrets?limit=1", new Answer(200, "[" + SECRET.formatted(2) + "]", "tok%2F1"));
    answers.put("GET /secrets?limit=1&nextToken=tok%252F1", new Answer(200, "[]", null));
    SecretPage first = secrets.list(1, null);
    assertThat(first.secrets()).extracting(SecretInfo::secretId).containsExactly("sec_1");
    assertThat(first.nextToken()).isEqualTo("tok%2F1");
    SecretPage second = secrets.list(1, first.nextToken());
    assertThat(second.secrets()).isEmpty();
    assertThat(second.hasNext()).isFalse();
    answers.put("GET /secrets?limit=100", new Answer(200, "[" + SECRET.formatted(2) + "]", null));
    assertThat(secrets.list()).hasSize(1);

    answers.put("DELETE /secrets/sec_1", new Answer(204, null, null));
    assertThat(secrets.destroy("sec_1")).isTrue();
    assertThat(last().method()).isEqualTo("DELETE");
    answers.put("DELETE /secrets/sec_1", new Answer(404, "{\"code\":404,\"message\":\"not found\"}", null));
    assertThat(secrets.destroy("sec_1")).isFalse();
    assertThat(server.requests()).extracting(r -> r.header("X-API-KEY")).containsOnly(KEY);
  }

  @Test
  @DisplayName("a missing secret is typed, exists is false only on 404, a refused key is typed, and a value echoed back never shows")
  void typedErrors() {
    E2BSecrets secrets = provider.api().secrets();
    answers.put("GET /secrets/gone", new Answer(404, "{\"code\":404,\"message\":\"secret not found\"}", null));
    assertThat(secrets.exists("gone")).isFalse();
    assertThatThrownBy(() -> secrets.getInfo("gone"))
        .isInstanceOfSatisfying(SecretNotFoundException.class, e -> assertThat(e.secret()).isEqualTo("gone"));
    answers.put("POST /secrets/gone", new Answer(404, "{\"code\":404,\"message\":\"secret not found\"}", null));
    assertThatThrownBy(() -> secrets.update("gone", VALUE, null)).isInstanceOf(SecretNotFoundException.class);

    answers.put("GET /secrets/busy", new Answer(500, "{\"code\":500,\"message\":\"store down\"}", null));
    assertThatThrownBy(() -> secrets.exists("busy"))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(500))
        .isNotInstanceOf(SecretNotFoundException.class);

    answers.put("POST /secrets", new Answer(400, "{\"code\":400,\"message\":\"value " + VALUE + " is not allowed\"}", null));
    assertThatThrownBy(() -> secrets.create("openai-key", VALUE))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(400);
          assertThat(e.getMessage()).doesNotContain(VALUE);
          assertThat(e.serverMessage()).doesNotContain(VALUE);
        });

    answers.put("GET /secrets/x", new Answer(401, "{\"code\":401,\"message\":\"bad key\"}", null));
    assertThatThrownBy(() -> secrets.getInfo("x")).isInstanceOf(SandboxAuthenticationException.class);
  }

  @Test
  @DisplayName("fill makes E2B's placeholder and refuses a name it cannot carry")
  void fill() {
    assertThat(E2BSecrets.fill("openai-key")).isEqualTo("${e2b.secrets.openai-key}");
    assertThatThrownBy(() -> E2BSecrets.fill("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> E2BSecrets.fill("a}b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> E2BSecrets.fill("a{b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> E2BSecrets.fill("a\nb")).isInstanceOf(IllegalArgumentException.class);
  }
}
