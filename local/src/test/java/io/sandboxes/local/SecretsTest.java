package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.E2BSecrets;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SecretInfo;
import io.sandboxes.e2b.SecretNotFoundException;
import io.sandboxes.e2b.SecretPage;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * E2B's secrets API on the local server, through the Java client and raw HTTP: what each call
 * answers, that a value never comes back (in an answer or a log line), how the secrets are kept
 * on the host, and that network rules which fill in a secret that does not exist are refused naming it.
 */
@ExtendWith(SharedServer.class)
class SecretsTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("create, get, exists, list, update and destroy through the Java client, by name and by id")
  void lifecycle(E2BApi api) {
    E2BSecrets secrets = api.secrets();
    String name = "Key-" + UUID.randomUUID().toString().substring(0, 8);
    SecretInfo made = secrets.create(name, "value-one", Map.of("team", "a"));
    assertThat(made.name()).isEqualTo(name.toLowerCase(java.util.Locale.ROOT));
    assertThat(made.secretId()).matches("sec_[0-7][0-9a-hjkmnp-tv-z]{25}");
    assertThat(made.version()).isEqualTo(1);
    assertThat(made.metadata()).containsExactly(Map.entry("team", "a"));
    assertThat(made.updatedAt()).isEqualTo(made.createdAt());

    assertThat(secrets.getInfo(name.toUpperCase(java.util.Locale.ROOT))).isEqualTo(made);
    assertThat(secrets.getInfo(made.secretId())).isEqualTo(made);
    assertThat(secrets.exists(name)).isTrue();
    assertThat(secrets.list()).contains(made);

    SecretInfo kept = secrets.update(name, "value-two", null);
    assertThat(kept.version()).isEqualTo(2);
    assertThat(kept.metadata()).as("metadata left out is kept").containsExactly(Map.entry("team", "a"));
    assertThat(kept.createdAt()).isEqualTo(made.createdAt());
    assertThat(kept.updatedAt()).isAfterOrEqualTo(made.updatedAt());
    SecretInfo cleared = secrets.update(made.secretId(), "value-three", Map.of());
    assertThat(cleared.version()).isEqualTo(3);
    assertThat(cleared.metadata()).as("metadata given, even empty, replaces").isEmpty();

    assertThatThrownBy(() -> secrets.create(name, "again", null)).isInstanceOfSatisfying(SandboxApiException.class,
        e -> assertThat(e.statusCode()).isEqualTo(409));
    assertThat(secrets.destroy(name)).isTrue();
    assertThat(secrets.destroy(name)).isFalse();
    assertThat(secrets.exists(made.secretId())).isFalse();
    assertThatThrownBy(() -> secrets.getInfo(name)).isInstanceOf(SecretNotFoundException.class);
    assertThatThrownBy(() -> secrets.update(name, "x", null)).isInstanceOf(SecretNotFoundException.class);
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("a listing pages in the order made, with X-Next-Token")
  void paging(E2BApi api) {
    E2BSecrets secrets = api.secrets();
    String prefix = "page-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> made = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      made.add(secrets.create(prefix + "-" + i, "v" + i).secretId());
    }
    try {
      List<String> seen = new java.util.ArrayList<>();
      String token = null;
      int pages = 0;
      do {
        SecretPage page = secrets.list(1, token);
        assertThat(page.secrets()).hasSizeLessThanOrEqualTo(1);
        page.secrets().forEach(s -> seen.add(s.secretId()));
        token = page.nextToken();
        pages++;
      } while (token != null && pages < 10_000);
      assertThat(seen.stream().filter(made::contains).toList()).containsExactlyElementsOf(made);
    } finally {
      made.forEach(secrets::destroy);
    }
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("refusals: bad names, ids, bodies and metadata are 400 and repeat nothing of the request")
  void refusals(LocalServer server) throws Exception {
    String secretish = "do-not-echo-" + UUID.randomUUID();
    assertThat(call(server, "POST", "/secrets", "{\"name\":\"has space\",\"value\":\"" + secretish + "\"}").statusCode()).isEqualTo(400);
    assertThat(call(server, "POST", "/secrets", "{\"name\":\"sec_reserved\",\"value\":\"v\"}").statusCode()).isEqualTo(400);
    assertThat(call(server, "POST", "/secrets", "{\"name\":\"ok-name\"}").statusCode()).isEqualTo(400);
    assertThat(call(server, "POST", "/secrets", "{\"name\":\"ok-name\",\"value\":5}").statusCode()).isEqualTo(400);
    HttpResponse<String> badJson = call(server, "POST", "/secrets", "{\"name\":\"ok\",\"value\":" + secretish + "}");
    assertThat(badJson.statusCode()).isEqualTo(400);
    assertThat(badJson.body()).doesNotContain(secretish).contains("Invalid secrets request");
    assertThat(call(server, "POST", "/secrets", "{\"name\":\"meta\",\"value\":\"v\",\"metadata\":{\"k\":1}}").statusCode())
        .isEqualTo(400);
    assertThat(call(server, "GET", "/secrets/sec_notanid", null).statusCode()).isEqualTo(400);
    assertThat(call(server, "GET", "/secrets/sec_00000000000000000000000000", null).statusCode()).isEqualTo(404);
    HttpResponse<String> missing = call(server, "GET", "/secrets/no-such-secret-here", null);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(Json.parse(missing.body().getBytes(StandardCharsets.UTF_8)).path("message").asText()).isEqualTo("Secret not found");
    assertThat(call(server, "GET", "/secrets", null, "nokey").statusCode()).isEqualTo(401);
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("a value is in no answer and no log line, from create to delete")
  void valueNeverShown(LocalServer server) throws Exception {
    String name = "hidden-" + UUID.randomUUID().toString().substring(0, 8);
    String first = "first-" + UUID.randomUUID();
    String second = "second-" + UUID.randomUUID();
    StringBuilder answers = new StringBuilder();
    String logs;
    CapturedLogs captured = new CapturedLogs();
    String id;
    try {
      HttpResponse<String> created = call(server, "POST", "/secrets", "{\"name\":\"" + name + "\",\"value\":\"" + first + "\"}");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      answers.append(created.body());
      JsonNode c = Json.parse(created.body().getBytes(StandardCharsets.UTF_8));
      id = c.path("secretID").asText();
      assertThat(c.properties()).extracting(Map.Entry::getKey)
          .containsExactlyInAnyOrder("secretID", "name", "currentVersion", "metadata", "createdAt", "updatedAt");
      HttpResponse<String> updated = call(server, "POST", "/secrets/" + name, "{\"value\":\"" + second + "\"}");
      assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
      answers.append(updated.body());
      answers.append(call(server, "GET", "/secrets/" + id, null).body());
      answers.append(call(server, "GET", "/secrets", null).body());
      // a refused update says nothing of the value either
      answers.append(call(server, "POST", "/secrets/" + name, "{\"value\":\"" + first + "\",\"metadata\":[\"" + first + "\"]}").body());
    } finally {
      captured.close();
    }
    logs = captured.text();
    try {
      assertThat(logs).as("the capture saw the server's log").contains("secret=" + id);
      assertThat(logs).doesNotContain(first).doesNotContain(second);
      assertThat(answers.toString()).contains(id).doesNotContain(first).doesNotContain(second);
    } finally {
      call(server, "DELETE", "/secrets/" + id, null);
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("kept under the state folder (0700, files 0600, no temporary file left) and there after a restart")
  void keptAcrossRestart(@TempDir Path state) throws Exception {
    String value = "kept-" + UUID.randomUUID();
    SecretInfo made;
    try (LocalServer a = TestRuntime.builder().stateDir(state).warmPool(0).build().start(); E2BSandboxProvider p = client(a)) {
      made = p.api().secrets().create("kept", value, Map.of("k", "v"));
      p.api().secrets().update("kept", value + "-2", null);
    }
    Path folder = state.resolve("secrets");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(folder))).isEqualTo("rwx------");
    List<Path> files;
    try (var s = Files.list(folder)) {
      files = s.toList();
    }
    assertThat(files).extracting(f -> f.getFileName().toString()).containsExactly(made.secretId() + ".json");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(files.get(0)))).isEqualTo("rw-------");
    assertThat(Files.readString(files.get(0))).contains(value + "-2").doesNotContain(value + "\"");

    try (LocalServer b = TestRuntime.builder().stateDir(state).warmPool(0).build().start(); E2BSandboxProvider p = client(b)) {
      SecretInfo again = p.api().secrets().getInfo("kept");
      assertThat(again.secretId()).isEqualTo(made.secretId());
      assertThat(again.version()).isEqualTo(2);
      assertThat(again.metadata()).containsExactly(Map.entry("k", "v"));
      assertThat(again.createdAt()).isEqualTo(made.createdAt());
      assertThatThrownBy(() -> p.api().secrets().create("KEPT", "x", null)).isInstanceOfSatisfying(SandboxApiException.class,
          e -> assertThat(e.statusCode()).isEqualTo(409));
      assertThat(p.api().secrets().destroy(made.secretId())).isTrue();
    }
    try (var s = Files.list(folder)) {
      assertThat(s.toList()).isEmpty();
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @DisplayName("a server with a fresh id and no state folder of its own, which no later server can follow, leaves no secret on the disk")
  void ephemeralServerLeavesNone() throws Exception {
    Path folder;
    try (LocalServer s = TestRuntime.builder().warmPool(0).build().start(); E2BSandboxProvider p = client(s)) {
      folder = ServerParts.defaultStateRoot().resolve(s.serverId()).resolve("secrets");
      p.api().secrets().create("short-lived", "gone-" + UUID.randomUUID());
      try (var files = Files.list(folder)) {
        assertThat(files.toList()).hasSize(1);
      }
    }
    assertThat(folder).doesNotExist();
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("network rules that fill in a secret that does not exist are refused at create and on update, naming the secret")
  void rulesWithSecretsRefused(E2BApi api) {
    String missing = "openai-key-" + UUID.randomUUID().toString().substring(0, 8);
    String fill = E2BSecrets.fill(missing);
    SandboxNetwork withRule = SandboxNetwork.allowOnly("api.example.com")
        .withRule("api.example.com", Map.of("Authorization", "Bearer " + fill));
    assertThatThrownBy(() -> api.create(SandboxSpec.defaults().withNetwork(withRule)))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(400);
          assertThat(e.serverMessage()).startsWith("'rules' fill in secret '" + missing + "', which does not exist on this server");
        });
    try (LiveSandbox s = api.create()) {
      assertThatThrownBy(() -> api.updateNetwork(s.id(), withRule)).isInstanceOfSatisfying(SandboxApiException.class, e -> {
        assertThat(e.statusCode()).isEqualTo(400);
        assertThat(e.serverMessage()).contains("secret '" + missing + "'");
      });
      assertThat(s.info().network() == null || s.info().network().rules().isEmpty()).as("nothing of the rule was kept").isTrue();
    }
  }

  private static E2BSandboxProvider client(LocalServer s) {
    return E2BSandboxProvider.builder().apiUrl(s.apiUrl()).sandboxUrl(s.sandboxUrl()).apiKey(s.apiKey()).build();
  }

  private static HttpResponse<String> call(LocalServer server, String method, String path, String body) throws Exception {
    return call(server, method, path, body, server.apiKey());
  }

  private static HttpResponse<String> call(LocalServer server, String method, String path, String body, String key) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.apiUrl() + path)).header("X-API-KEY", key)
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
