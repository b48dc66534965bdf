package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.ScriptedServer.Answer;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildOptions;
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
  /** When set, the status body for the log offset asked for, instead of {@link #statusAnswer}. */
  private volatile java.util.function.IntFunction<String> statusAt;

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
        java.util.function.IntFunction<String> at = statusAt;
        return Answer.json(200, at == null ? statusAnswer : at.apply(Integer.parseInt(r.query().replace("logsOffset=", ""))));
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
  @DisplayName("minFreeDiskMb goes in the build's request (POST /v3/templates) as E2B's SDK sends it, and not at all when unset")
  void minFreeDiskOnTheWire() {
    E2BTemplates templates = provider.api().templates();
    templates.buildInBackground(Template.fromTemplate("base"), "roomy", BuildOptions.defaults().withMinFreeDiskMb(2048));
    JsonNode request = bodies.get("POST /v3/templates");
    assertThat(request.path("minFreeDiskMb").isInt()).as("%s", request).isTrue();
    assertThat(request.path("minFreeDiskMb").asInt()).isEqualTo(2048);
    assertThat(bodies.get("POST /v2/templates/tpl1/builds/b1").has("minFreeDiskMb")).as("not in the start request").isFalse();

    templates.buildInBackground(Template.fromTemplate("base"), "no-growth", BuildOptions.defaults().withMinFreeDiskMb(0));
    assertThat(bodies.get("POST /v3/templates").path("minFreeDiskMb").asInt(-1)).as("0 is sent: it asks for no growth").isEqualTo(0);

    templates.buildInBackground(Template.fromTemplate("base"), "plain");
    assertThat(bodies.get("POST /v3/templates").has("minFreeDiskMb")).as("unset, not sent: the server's default").isFalse();
    assertThatThrownBy(() -> BuildOptions.defaults().withMinFreeDiskMb(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("minFreeDiskMb");
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

  private static String status(String state, int from, int count, String reason) {
    StringBuilder entries = new StringBuilder();
    for (int i = from; i < from + count; i++) {
      entries.append(i == from ? "" : ",").append("{\"timestamp\":\"2026-01-01T00:00:00Z\",\"level\":\"info\",\"message\":\"line ")
          .append(i).append("\",\"step\":\"1\"}");
    }
    return "{\"templateID\":\"tpl1\",\"buildID\":\"b1\",\"status\":\"" + state + "\",\"logEntries\":[" + entries + "]" + reason + "}";
  }

  @Test
  @DisplayName("waitForBuild reads the whole log page by page, also after the end, and a failed build throws with the server's reason, step and log")
  void waitForBuildReadsToTheEnd() {
    BuildInfo build = new BuildInfo("tpl1", "b1", "with-git", List.of("default"));
    // building with two lines, then the end with 150 more lines on two pages, then nothing more
    statusAt = offset -> offset == 0 ? status("building", 0, 2, "")
        : offset == 2 ? status("ready", 2, 100, "") : offset == 102 ? status("ready", 102, 50, "") : status("ready", offset, 0, "");
    List<String> heard = new CopyOnWriteArrayList<>();
    BuildStatus done = provider.api().templates().waitForBuild(build, java.time.Duration.ofSeconds(30), e -> heard.add(e.message()));
    assertThat(done.state()).isEqualTo(BuildStatus.State.READY);
    assertThat(done.logEntries()).hasSize(152);
    assertThat(heard).hasSize(152).startsWith("line 0", "line 1", "line 2").endsWith("line 151");
    assertThat(requests).endsWith("GET /templates/tpl1/builds/b1/status?logsOffset=152");

    statusAt = offset -> offset == 0 ? status("error", 0, 3, ",\"reason\":{\"message\":\"exit code 3\",\"step\":\"4\"}")
        : status("error", offset, 0, ",\"reason\":{\"message\":\"exit code 3\",\"step\":\"4\"}");
    assertThatThrownBy(() -> provider.api().templates().waitForBuild(build, java.time.Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(io.sandboxes.template.TemplateBuildException.class, e -> {
          assertThat(e.reason()).isEqualTo("exit code 3");
          assertThat(e.step()).isEqualTo("4");
          assertThat(e.logs()).hasSize(3);
          assertThat(e.buildId()).isEqualTo("b1");
        });
  }

  @Test
  @DisplayName("waitForBuild is bounded (the build goes on) and interruptible (the flag kept), and refuses a timeout that is not positive")
  void waitForBuildIsBoundedAndInterruptible() throws Exception {
    BuildInfo build = new BuildInfo("tpl1", "b1", "slow", List.of("default"));
    statusAt = offset -> status("building", offset, 0, "");
    long started = System.nanoTime();
    assertThatThrownBy(() -> provider.api().templates().waitForBuild(build, java.time.Duration.ofMillis(700)))
        .isInstanceOfSatisfying(io.sandboxes.template.TemplateBuildException.class,
            e -> assertThat(e.reason()).contains("did not finish within").contains("building"));
    assertThat(java.time.Duration.ofNanos(System.nanoTime() - started)).isLessThan(java.time.Duration.ofSeconds(20));
    assertThatThrownBy(() -> provider.api().templates().waitForBuild(build, java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);

    java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean flagKept = new java.util.concurrent.atomic.AtomicBoolean();
    Thread waiter = Thread.ofVirtual().start(() -> {
      try {
        provider.api().templates().waitForBuild(build, java.time.Duration.ofMinutes(5));
      } catch (RuntimeException e) {
        thrown.set(e);
        flagKept.set(Thread.currentThread().isInterrupted());
      }
    });
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .until(() -> requests.stream().filter(r -> r.contains("/status")).count() >= 3);
    waiter.interrupt();
    waiter.join(java.time.Duration.ofSeconds(20));
    assertThat(waiter.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(SandboxException.class).hasMessageContaining("interrupted");
    assertThat(flagKept).isTrue();
  }
}
