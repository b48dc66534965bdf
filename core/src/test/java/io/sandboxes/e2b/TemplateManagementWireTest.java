package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.ScriptedServer.Answer;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.RegistryCredentials;
import io.sandboxes.template.Template;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The wire form of what the local server cannot serve, against a scripted server (a real JDK
 * HTTP server on loopback): registry credentials in a build's start request (the local runtime
 * pulls nothing and refuses them), and build statuses the local server never sends (a reason with
 * its own log, a state this client does not know).
 */
class TemplateManagementWireTest {
  private static final String KEY = "e2b_templates0123456789abcdef";

  private ScriptedServer server;
  private E2BSandboxProvider provider;
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final Map<String, JsonNode> bodies = new ConcurrentHashMap<>();
  /** What the start of a build answers, and the status body. */
  private volatile String startAnswer = "";
  private volatile int startStatus = 202;
  private volatile String statusAnswer = "{}";

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> {
      String line = r.lineWithQuery();
      requests.add(line);
      if (r.json() != null) {
        bodies.put(line, r.json());
      }
      if (r.path().equals("/v3/templates")) {
        return Answer.json(202, "{\"templateID\":\"tpl1\",\"buildID\":\"b1\",\"tags\":[\"default\"]}");
      } else if (r.path().startsWith("/v2/templates/")) {
        return Answer.json(startStatus, startAnswer);
      } else if (r.path().endsWith("/status")) {
        return Answer.json(200, statusAnswer);
      }
      return Answer.error(404, "no route");
    });
    provider = E2BSandboxProvider.builder().apiUrl(server.url()).apiKey(KEY).build();
  }

  @AfterEach
  void stop() {
    provider.close();
    server.close();
  }

  @Test
  @DisplayName("each kind of registry credentials goes in the start request's fromImageRegistry, as E2B's SDK sends it")
  void registryCredentialsOnTheWire() {
    E2BTemplates templates = provider.api().templates();
    BuildInfo b = templates.buildInBackground(Template.fromImage("ghcr.io/t/i:1", new RegistryCredentials.Basic("robot", "pw-basic-123")),
        "private");
    assertThat(b).isEqualTo(new BuildInfo("tpl1", "b1", "private", List.of("default")));
    JsonNode body = bodies.get("POST /v2/templates/tpl1/builds/b1");
    assertThat(body.path("fromImage").asText()).isEqualTo("ghcr.io/t/i:1");
    assertThat(body.path("fromImageRegistry").toString()).isEqualTo("{\"type\":\"registry\",\"username\":\"robot\",\"password\":\"pw-basic-123\"}");
    assertThat(requests).as("a background build reads no status").noneMatch(r -> r.contains("/status"));

    templates.buildInBackground(Template.fromImage("123.dkr.ecr.eu-west-1.amazonaws.com/i:1",
        new RegistryCredentials.Aws("AKIAEXAMPLE", "aws-secret-123", "eu-west-1")), "aws");
    assertThat(bodies.get("POST /v2/templates/tpl1/builds/b1").path("fromImageRegistry").toString()).isEqualTo(
        "{\"type\":\"aws\",\"awsAccessKeyId\":\"AKIAEXAMPLE\",\"awsSecretAccessKey\":\"aws-secret-123\",\"awsRegion\":\"eu-west-1\"}");

    templates.buildInBackground(Template.fromImage("gcr.io/p/i:1", new RegistryCredentials.Gcp("{\"k\":\"gcp-key-123\"}")), "gcp");
    assertThat(bodies.get("POST /v2/templates/tpl1/builds/b1").path("fromImageRegistry").toString()).isEqualTo(
        "{\"type\":\"gcp\",\"serviceAccountJson\":\"{\\\"k\\\":\\\"gcp-key-123\\\"}\"}");

    templates.buildInBackground(Template.fromTemplate("base"), "plain");
    assertThat(bodies.get("POST /v2/templates/tpl1/builds/b1").has("fromImageRegistry")).as("no credentials, no field").isFalse();
  }

  @Test
  @DisplayName("a server that echoes the password in its refusal does not make the client show it")
  void passwordNeverShown() {
    startStatus = 400;
    startAnswer = "{\"code\":400,\"message\":\"cannot pull with password pw-echoed-4567 for robot\"}";
    Template t = Template.fromImage("ghcr.io/t/i:1", new RegistryCredentials.Basic("robot", "pw-echoed-4567"));
    assertThatThrownBy(() -> provider.api().templates().buildInBackground(t, "private"))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(400);
          assertThat(e.getMessage()).contains("robot").doesNotContain("pw-echoed-4567");
        });
  }

  @Test
  @DisplayName("buildStatus reads the offset asked for, a failure's reason with its step and log, and refuses a state it does not know")
  void buildStatusShapes() {
    statusAnswer = """
        {"templateID":"tpl1","buildID":"b1","status":"error","logs":["x"],
         "logEntries":[{"timestamp":"2026-01-01T00:00:00Z","level":"info","message":"x","step":"2"}],
         "reason":{"message":"exit code 7","step":"2","logEntries":[{"timestamp":"2026-01-01T00:00:01Z","level":"error","message":"boom"}]}}
        """;
    BuildStatus s = provider.api().templates().buildStatus("tpl1", "b1", 5);
    assertThat(requests).contains("GET /templates/tpl1/builds/b1/status?logsOffset=5");
    assertThat(s.state()).isEqualTo(BuildStatus.State.ERROR);
    assertThat(s.finished()).isTrue();
    assertThat(s.logEntries()).singleElement().satisfies(e -> assertThat(e.step()).isEqualTo("2"));
    assertThat(s.reason()).isNotNull();
    assertThat(s.reason().message()).isEqualTo("exit code 7");
    assertThat(s.reason().step()).isEqualTo("2");
    assertThat(s.reason().logEntries()).singleElement().satisfies(e -> assertThat(e.message()).isEqualTo("boom"));

    statusAnswer = "{\"templateID\":\"tpl1\",\"buildID\":\"b1\",\"status\":\"uploaded\",\"logEntries\":[]}";
    assertThatThrownBy(() -> provider.api().templates().buildStatus("tpl1", "b1", 0)).isInstanceOf(SandboxException.class)
        .hasMessageContaining("unknown build status 'uploaded'");
    assertThatThrownBy(() -> provider.api().templates().buildStatus("tpl1", "b1", -1)).isInstanceOf(IllegalArgumentException.class);
  }
}
