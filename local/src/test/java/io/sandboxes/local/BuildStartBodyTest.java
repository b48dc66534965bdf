package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a template build's start ({@code POST /v2/templates/{id}/builds/{build}}) accepts and
 * refuses in its body, exactly, and how what it accepts is read: an unknown build first, then the
 * steps' shape and types, the registry, the base; step arguments as text.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuildStartBodyTest {
  private static final String EXACTLY_ONE = "exactly one of 'fromImage' and 'fromTemplate' is required";
  private static final String STEPS = "'steps' must be a list";

  private LocalServer server;
  private HttpClient http;

  @BeforeAll
  void start(LocalServer server) {
    this.server = server;
    this.http = HttpClient.newHttpClient();
  }

  @AfterAll
  void stop() {
    if (http != null) {
      http.close();
    }
  }

  private record Answer(int status, JsonNode body) {}

  private Answer api(String method, String path, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey())
        .header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body)).build();
    HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
    return new Answer(a.statusCode(), a.body().isEmpty() ? Json.object() : Json.parse(a.body().getBytes(StandardCharsets.UTF_8)));
  }

  private void refused(String path, String body, int status, String message) throws Exception {
    Answer a = api("POST", path, body);
    assertThat(a.status() + " " + a.body().path("message").asText()).as("%s %s: %s", path, body, a.body()).isEqualTo(status + " " + message);
  }

  /** A requested build's start path. */
  private String requested(String name) throws Exception {
    Answer r = api("POST", "/v3/templates", "{\"name\":\"" + name + "\"}");
    assertThat(r.status()).as(r.body().toString()).isEqualTo(202);
    return "/v2/templates/" + r.body().path("templateID").asText() + "/builds/" + r.body().path("buildID").asText();
  }

  @Test
  @DisplayName("refusals, in the order they are checked; a body with a base that is no text is accepted and the build runs once")
  void refusals() throws Exception {
    refused("/v2/templates/nosuchtemplate/builds/nosuchbuild", "{\"steps\":\"x\"}", 404,
        "build 'nosuchbuild' of template 'nosuchtemplate' not found");
    String path = requested("pin-start-" + UUID.randomUUID().toString().substring(0, 8));
    refused(path, "[]", 400, "request body must be a JSON object");
    refused(path, "{\"steps\":\"x\",\"fromImage\":\"a\",\"fromTemplate\":\"b\"}", 400, STEPS);
    refused(path, "{\"steps\":{}}", 400, STEPS);
    refused(path, "{\"steps\":5}", 400, STEPS);
    String unknown = "unknown step type '%s' (COPY, ENV, RUN, WORKDIR or USER)";
    refused(path, "{\"steps\":[{\"type\":\"FROM\"}]}", 400, unknown.formatted("FROM"));
    refused(path, "{\"steps\":[{\"type\":\"ENV\",\"args\":[\"A\",\"1\"]},{\"type\":\"run\"}]}", 400, unknown.formatted("run"));
    refused(path, "{\"steps\":[null]}", 400, unknown.formatted("null"));
    refused(path, "{\"steps\":[\"RUN\"]}", 400, unknown.formatted("null"));
    refused(path, "{\"steps\":[{\"type\":null}]}", 400, unknown.formatted("null"));
    refused(path, "{\"steps\":[{\"type\":5}]}", 400, unknown.formatted("5"));
    refused(path, "{\"steps\":[{\"type\":{}}]}", 400, unknown.formatted(""));
    refused(path, "{\"fromImageRegistry\":{},\"steps\":[{\"type\":\"X\"}]}", 400, unknown.formatted("X"));
    String registry = "'fromImageRegistry' is not supported by the local runtime: it pulls nothing";
    refused(path, "{\"fromImageRegistry\":{\"type\":\"aws\"},\"fromImage\":\"x\"}", 400, registry);
    refused(path, "{\"fromImageRegistry\":false,\"steps\":null}", 400, registry);
    refused(path, "{\"fromImageRegistry\":null}", 400, EXACTLY_ONE);
    refused(path, "{\"fromImage\":\"a\",\"fromTemplate\":\"b\"}", 400, EXACTLY_ONE);
    refused(path, "{\"fromImage\":null,\"fromTemplate\":null,\"steps\":[]}", 400, EXACTLY_ONE);
    refused(path, "{\"fromImage\":1,\"fromTemplate\":[]}", 400, EXACTLY_ONE);
    // a base that is no text is read as its text: accepted, and the build (which fails later) runs once
    Answer started = api("POST", path, "{\"fromTemplate\":{},\"steps\":null,\"force\":\"yes\",\"future\":1}");
    assertThat(started.status()).as(started.body().toString()).isEqualTo(202);
    refused(path, "{\"fromTemplate\":\"base\"}", 409, "build '" + path.substring(path.lastIndexOf('/') + 1) + "' was started already");
  }

  @Test
  @DisplayName("a built template's ENV steps: arguments read as their text, a list's or an object's values")
  void stepArguments() throws Exception {
    String name = "pin-args-" + UUID.randomUUID().toString().substring(0, 8);
    String path = requested(name);
    Answer started = api("POST", path, "{\"fromTemplate\":\"base\",\"force\":0,\"steps\":["
        + "{\"type\":\"ENV\",\"args\":[\"N\",1.5],\"force\":\"true\",\"filesHash\":7},"
        + "{\"type\":\"ENV\",\"args\":{\"a\":\"M\",\"b\":true}},"
        + "{\"type\":\"ENV\",\"args\":[\"E\",\"\"],\"future\":[]}]}");
    assertThat(started.status()).as(started.body().toString()).isEqualTo(202);
    String status = path.replace("/v2/templates/", "/templates/") + "/status";
    await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
        .until(() -> api("GET", status, "").body().path("status").asText(), s -> !s.equals("building") && !s.equals("waiting"));
    JsonNode done = api("GET", status, "").body();
    assertThat(done.path("status").asText()).as(done.toString()).isEqualTo("ready");
    assertThat(done.path("logEntries").findValuesAsText("message")).anyMatch(m -> m.startsWith("[builder 1/3] ENV N 1.5 ["))
        .anyMatch(m -> m.startsWith("[builder 2/3] ENV M true [")).anyMatch(m -> m.startsWith("[builder 3/3] ENV E  ["));
    String templateId = path.split("/")[3];
    try {
      Answer made = api("POST", "/sandboxes", "{\"templateID\":\"" + name + "\"}");
      assertThat(made.status()).as(made.body().toString()).isEqualTo(201);
      String id = made.body().path("sandboxID").asText();
      assertThat(api("DELETE", "/sandboxes/" + id, "").status()).isEqualTo(204);
    } finally {
      assertThat(api("DELETE", "/templates/" + templateId, "").status()).isEqualTo(204);
    }
  }
}
