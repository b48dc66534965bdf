package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.Describing;
import io.sandboxes.ExecOptions;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Behaviour contract, sections A (configuration) and B (create, get, describe, destroy), against the real local server. */
@ExtendWith(SharedServer.class)
class ConfigurationAndLifecycleCasesTest {

  private static JsonNode json(FaultServer.Recorded r) throws Exception {
    return Json.parse(r.body());
  }

  private static JsonNode lastCreate(Harness h) throws Exception {
    List<FaultServer.Recorded> creates = h.api.requests("POST", "/v2/sandboxes");
    return json(creates.get(creates.size() - 1));
  }

  @Test
  @DisplayName("case 1, case 10: create sends template base, envs {} never absent, metadata with projectId and labels, the default timeout, pause-with-memory at the deadline")
  void createRequestShape(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p1"))) {
      JsonNode body = lastCreate(h);
      assertThat(body.path("templateID").asText()).isEqualTo("base");
      assertThat(body.path("envVars").isObject()).isTrue();
      assertThat(body.path("envVars").size()).isZero();
      assertThat(body.path("metadata").path("projectId").asText()).isEqualTo("p1");
      assertThat(body.path("timeout").asLong()).isEqualTo(3600);
      assertThat(body.path("autoPause").asBoolean()).isTrue();
      assertThat(body.path("autoPauseMemory").asBoolean()).isTrue();
    }
    try (Harness h = new Harness(server);
         Sandbox s = h.provider.create(SandboxConfig.forProject("p1").withEnv(Map.of("A", "1")).withLabels(Map.of("team", "x")))) {
      JsonNode body = lastCreate(h);
      assertThat(Json.stringMap(body.get("envVars"))).isEqualTo(Map.of("A", "1"));
      assertThat(Json.stringMap(body.get("metadata"))).isEqualTo(Map.of("projectId", "p1", "team", "x"));
      assertThat(s.exec("echo $A").stdout()).isEqualTo("1\n");
    }
  }

  @Test
  @DisplayName("case 2: template precedence: per-call beats configured beats E2B_TEMPLATE_ID beats base")
  void templatePrecedence(LocalServer server) throws Exception {
    try (Harness h = new Harness(server, b -> b.environment(Map.of("E2B_TEMPLATE_ID", "from-env")))) {
      assertThatThrownBy(() -> h.provider.create(SandboxConfig.forProject("p"))).isInstanceOf(SandboxApiException.class);
      assertThat(lastCreate(h).path("templateID").asText()).isEqualTo("from-env");
    }
    try (Harness h = new Harness(server, b -> b.environment(Map.of("E2B_TEMPLATE_ID", "from-env")).templateId("from-config"))) {
      assertThatThrownBy(() -> h.provider.create(SandboxConfig.forProject("p"))).isInstanceOf(SandboxApiException.class);
      assertThat(lastCreate(h).path("templateID").asText()).isEqualTo("from-config");
      try (Sandbox s = h.provider.create(SandboxConfig.forProject("p").withTemplate("base"))) {
        assertThat(lastCreate(h).path("templateID").asText()).isEqualTo("base");
      }
    }
  }

  @Test
  @DisplayName("case 3: the one-hour default timeout goes to create, get and resume; a configured one replaces it everywhere")
  void timeoutDefaults(LocalServer server) throws Exception {
    try (Harness h = new Harness(server, b -> b.defaultTimeout(Duration.ofMinutes(7)));
         Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      assertThat(lastCreate(h).path("timeout").asLong()).isEqualTo(420);
      h.provider.get(s.id()).orElseThrow();
      s.hibernate();
      s.resume();
      assertThat(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect")).hasSize(2)
          .allSatisfy(r -> assertThat(json(r).path("timeout").asLong()).isEqualTo(420));
    }
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      h.provider.get(s.id());
      assertThat(json(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect").get(0)).path("timeout").asLong()).isEqualTo(3600);
    }
  }

  @Test
  @DisplayName("case 4, case 11: a new handle is running, with its id and the preview URL of port 5173 on E2B's domain")
  void previewUrl(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      assertThat(s.status()).isEqualTo(SandboxState.RUNNING);
      assertThat(s.id()).matches("[a-z0-9]{20}");
      assertThat(s.previewUrl()).isEqualTo("https://5173-" + s.id() + ".e2b.app").isEqualTo(s.previewUrl(5173));
      assertThat(s.previewUrl(8080)).isEqualTo("https://8080-" + s.id() + ".e2b.app");
    }
    try (Harness h = new Harness(server, b -> b.defaultPreviewPort(3000).domain("example.test"));
         Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      assertThat(s.previewUrl()).isEqualTo("https://3000-" + s.id() + ".example.test");
    }
  }

  @Test
  @DisplayName("case 5: the key comes from E2B_API_KEY when the builder names none, and an explicit key wins over it")
  void apiKeyPrecedence(LocalServer server) throws Exception {
    // the environment's key is one the server refuses: were it sent instead of the explicit one,
    // create would fail with a 401 and the recorded header would name it
    String refused = "e2b_not_the_server_key_0000";
    try (Harness h = new Harness(server, b -> b.environment(Map.of("E2B_API_KEY", refused)))) {
      try (Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
        s.exec("true").orThrow();
        h.provider.describe(s.id()).orElseThrow();
      }
      assertThat(h.api.requests()).isNotEmpty()
          .allSatisfy(r -> assertThat(r.headers().get("x-api-key")).isEqualTo(server.apiKey()));
    }
    try (FaultServer api = new FaultServer(server.apiUrl());
         E2BSandboxProvider fromEnv = E2BSandboxProvider.builder().apiUrl(api.url()).sandboxUrl(server.sandboxUrl())
             .environment(Map.of("E2B_API_KEY", server.apiKey())).build()) {
      try (Sandbox s = fromEnv.create(SandboxConfig.forProject("p"))) {
        fromEnv.describe(s.id()).orElseThrow();
      }
      assertThat(api.requests()).hasSizeGreaterThanOrEqualTo(3)
          .allSatisfy(r -> assertThat(r.headers().get("x-api-key")).isEqualTo(server.apiKey()));
    }
    // and the refused key, when it is the only one, is the one sent (so the first block proves precedence)
    try (FaultServer api = new FaultServer(server.apiUrl());
         E2BSandboxProvider wrong = E2BSandboxProvider.builder().apiUrl(api.url()).environment(Map.of("E2B_API_KEY", refused)).build()) {
      assertThatThrownBy(() -> wrong.create(SandboxConfig.forProject("p")))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(401));
      assertThat(api.requests()).singleElement().satisfies(r -> assertThat(r.headers().get("x-api-key")).isEqualTo(refused));
    }
  }

  @Test
  @DisplayName("case 6: without a key, building works and the first call fails saying so, sending nothing")
  void missingKey(LocalServer server) throws Exception {
    try (FaultServer api = new FaultServer(server.apiUrl());
         E2BSandboxProvider keyless = E2BSandboxProvider.builder().apiUrl(api.url()).environment(Map.of()).build()) {
      assertThatThrownBy(() -> keyless.create(SandboxConfig.forProject("p")))
          .isInstanceOf(SandboxException.class)
          .hasMessage("E2B provider requires an API key (config.apiKey or E2B_API_KEY)");
      assertThatThrownBy(() -> keyless.list()).hasMessageContaining("requires an API key");
      assertThat(api.requests()).isEmpty();
    }
  }

  // case 7 (an injected client skips the key check) has no counterpart here: the Java provider
  // takes no client override, so there is nothing to inject and nothing is claimed for it.

  @Test
  @DisplayName("case 8: one HTTP client serves every call of a provider: sequential calls share one kept-alive connection")
  void clientMemoised(LocalServer server) throws Exception {
    // seen from the server's side: a provider that built a client per call (or per operation)
    // would open a new connection, from a new port, for each of these requests
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      h.provider.describe(s.id()).orElseThrow();
      h.provider.get(s.id()).orElseThrow();
      h.provider.describe(s.id()).orElseThrow();
      // five in a row: a loaded machine probes slow execs on a second connection, and with only
      // two execs the two commands and their probes once took four connections for four requests
      for (int i = 0; i < 5; i++) {
        s.exec("true").orThrow();
      }
      List<FaultServer.Recorded> calls = h.api.requests();
      assertThat(calls).hasSizeGreaterThanOrEqualTo(4);
      assertThat(calls.stream().map(FaultServer.Recorded::client).distinct()).as("client connections of %s",
          calls.stream().map(r -> r.method() + " " + r.path() + " from " + r.client()).toList()).hasSize(1);
      // the daemon's: fewer connections than requests (a slow exec on a loaded machine is probed,
      // and the probe's stream runs beside the command's on a second connection)
      List<FaultServer.Recorded> envdCalls = h.envd.requests();
      assertThat(envdCalls).hasSizeGreaterThanOrEqualTo(2);
      assertThat(envdCalls.stream().map(FaultServer.Recorded::client).distinct().count()).as("daemon connections")
          .isLessThan(envdCalls.size());
    }
  }

  @Test
  @DisplayName("case 9, case 12: no default allow-list sends no network; a configured one goes deny-by-default in the create request itself, with no update after it")
  void allowList(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      assertThat(lastCreate(h).has("network")).isFalse();
      assertThat(h.api.requests("PUT", "/sandboxes/")).isEmpty();
    }
    try (Harness h = new Harness(server, b -> b.defaultAllowOut(List.of("registry.npmjs.org", "*.npmjs.org")));
         Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      JsonNode policy = lastCreate(h).path("network");
      assertThat(policy.path("allowOut")).extracting(JsonNode::asText).containsExactly("registry.npmjs.org", "*.npmjs.org");
      assertThat(policy.path("denyOut")).extracting(JsonNode::asText).containsExactly("0.0.0.0/0");
      assertThat(h.api.requests("PUT", "/sandboxes/")).isEmpty();
      assertThat(h.provider.api().info(s.id()).network().allowOut()).containsExactly("registry.npmjs.org", "*.npmjs.org");
    }
  }

  @Test
  @DisplayName("case 13, case 14: a policy the server refuses fails the create itself, so there is no sandbox to destroy or orphan")
  void policyFailureCreatesNothing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server, b -> b.defaultAllowOut(List.of("pypi.org")))) {
      h.api.on(FaultServer.route("POST", "/v2/sandboxes"), FaultServer.json(503, "{\"code\":503,\"message\":\"policy store down\"}"));
      assertThatThrownBy(() -> h.provider.create(SandboxConfig.forProject("p")))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(503))
          .hasMessageContaining("policy store down");
      assertThat(lastCreate(h).path("network").path("allowOut")).extracting(JsonNode::asText).containsExactly("pypi.org");
      assertThat(h.api.requests("PUT", "/sandboxes/")).isEmpty();
      assertThat(h.api.requests("DELETE", "/sandboxes/")).isEmpty();
    }
  }

  @Test
  @DisplayName("case 15, case 16, case 17: get connects with the default timeout; empty only on a positive not-found; a 503 throws")
  void get(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      Sandbox again = h.provider.get(s.id()).orElseThrow();
      assertThat(again.id()).isEqualTo(s.id());
      assertThat(json(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect").get(0)).path("timeout").asLong()).isEqualTo(3600);
      assertThat(h.provider.get("nosuchsandbox0000000")).isEmpty();
      h.api.on(FaultServer.route("POST", "/v2/sandboxes/.*/connect"), FaultServer.json(503, "{\"code\":503,\"message\":\"Service Unavailable\"}"));
      assertThatThrownBy(() -> h.provider.get(s.id())).isInstanceOf(SandboxApiException.class).hasMessageContaining("503");
      h.api.on(FaultServer.route("POST", "/v2/sandboxes/.*/connect"), FaultServer.json(401, "{\"code\":401,\"message\":\"bad key\"}"));
      assertThatThrownBy(() -> h.provider.get(s.id())).isInstanceOf(SandboxApiException.class).hasMessageContaining("401");
    }
  }

  @Test
  @DisplayName("case 18: a not-found is recognised by its status even when the body is not E2B's error shape")
  void notFoundByStatus(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("POST", "/v2/sandboxes/.*/connect"), FaultServer.json(404, "not json at all"));
      assertThat(h.provider.get("whatever000000000000")).isEmpty();
    }
  }

  @Test
  @DisplayName("case 19, case 20, case 21, case 22: describe reads the record without connecting, maps it, keeps a paused sandbox paused")
  void describe(LocalServer server) throws Exception {
    try (Harness h = new Harness(server);
         Sandbox s = h.provider.create(SandboxConfig.forProject("proj-1").withLabels(Map.of("team", "x")))) {
      h.api.clearRequests();
      SandboxInfo d = h.provider.capability(Describing.class).orElseThrow().describe(s.id()).orElseThrow();
      assertThat(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect")).isEmpty();
      assertThat(d.id()).isEqualTo(s.id());
      assertThat(d.projectId()).isEqualTo("proj-1");
      assertThat(d.state()).isEqualTo(SandboxState.RUNNING);
      assertThat(d.metadata()).isEqualTo(Map.of("projectId", "proj-1", "team", "x"));
      assertThat(d.templateId()).isEqualTo("base");
      assertThat(d.startedAt()).isBetween(Instant.now().minusSeconds(120), Instant.now().plusSeconds(1));
      assertThat(d.volumeName()).isNull();
      s.hibernate();
      assertThat(h.provider.describe(s.id()).orElseThrow().state()).isEqualTo(SandboxState.PAUSED);
      assertThat(h.provider.describe(s.id()).orElseThrow().state()).isEqualTo(SandboxState.PAUSED);
    }
  }

  @Test
  @DisplayName("case 21, case 23: odd timestamps and missing fields fall back to null, the requested id, empty labels")
  void describeFallbacks(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/sandboxes/sparse00000000000000"),
          FaultServer.json(200, "{\"state\":\"running\",\"startedAt\":\"2026-08-15T10:00Z\"}"));
      SandboxInfo d = h.provider.describe("sparse00000000000000").orElseThrow();
      assertThat(d.id()).isEqualTo("sparse00000000000000");
      assertThat(d.projectId()).isNull();
      assertThat(d.metadata()).isEmpty();
      assertThat(d.templateId()).isNull();
      assertThat(d.volumeName()).isNull();
      assertThat(d.startedAt()).isEqualTo(Instant.parse("2026-08-15T10:00:00.000Z"));
      h.api.on(FaultServer.route("GET", "/sandboxes/oddtime0000000000000"),
          FaultServer.json(200, "{\"sandboxID\":\"oddtime0000000000000\",\"state\":\"weird\",\"startedAt\":\"yesterday\"}"));
      SandboxInfo odd = h.provider.describe("oddtime0000000000000").orElseThrow();
      assertThat(odd.startedAt()).isNull();
      assertThat(odd.state()).isEqualTo(SandboxState.RUNNING);
    }
  }

  @Test
  @DisplayName("case 24: the first mounted volume shows in the descriptor")
  void describeVolume(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.provider.createVolume("desc-vol-" + System.nanoTime() % 100000);
      String name = h.provider.listVolumes(io.sandboxes.VolumeQuery.prefixed("desc-vol-")).get(0).name();
      try (Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(name, "/workspace"))) {
        assertThat(h.provider.describe(s.id()).orElseThrow().volumeName()).isEqualTo(name);
      }
      h.provider.removeVolume(name);
    }
  }

  @Test
  @DisplayName("case 25: describe is empty on not-found and throws on any other failure")
  void describeFailures(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      assertThat(h.provider.describe("nosuchsandbox0000000")).isEmpty();
      h.api.on(FaultServer.route("GET", "/sandboxes/.*"), FaultServer.json(504, "{\"code\":504,\"message\":\"ETIMEDOUT\"}"));
      assertThatThrownBy(() -> h.provider.describe("any00000000000000000")).hasMessageContaining("ETIMEDOUT");
    }
  }

  @Test
  @DisplayName("case 26, case 27: destroy kills once through the control plane without connecting; a missing sandbox is not an error; a kill failure propagates")
  void destroy(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox s = h.provider.create(SandboxConfig.forProject("p"));
      h.api.clearRequests();
      h.provider.destroy(s.id());
      assertThat(h.api.requests("DELETE", "/sandboxes/" + s.id())).hasSize(1);
      assertThat(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect")).isEmpty();
      assertThat(h.provider.describe(s.id())).isEmpty();
      h.provider.destroy(s.id());
      h.api.on(FaultServer.route("DELETE", "/sandboxes/.*"), FaultServer.json(500, "{\"code\":500,\"message\":\"kill failed\"}"));
      assertThatThrownBy(() -> h.provider.destroy("whatever000000000000")).hasMessageContaining("kill failed");
    }
  }

  @Test
  @DisplayName("case 28: quick start: create, write a file, run it with a deadline, preview URL, destroy")
  void quickStart(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox s = h.provider.create(SandboxConfig.forProject("quick"));
      s.writeFile("/home/user/workspace/hello.py", "print('hello from the quick start')");
      var r = s.exec("python3 /home/user/workspace/hello.py", ExecOptions.defaults().withTimeout(Duration.ofSeconds(30)));
      assertThat(r.exitCode()).isZero();
      assertThat(r.stdout()).isEqualTo("hello from the quick start\n");
      assertThat(h.envd.requests("POST", "/process.Process/Start").get(0).headers().get("connect-timeout-ms")).isEqualTo("30000");
      assertThat(s.previewUrl(5173)).isEqualTo("https://5173-" + s.id() + ".e2b.app");
      h.provider.destroy(s.id());
      assertThat(h.api.requests("DELETE", "/sandboxes/" + s.id())).hasSize(1);
    }
  }

  @Test
  @DisplayName("a boot command or a volume without a mount path is refused before anything is created")
  void refusedConfigs(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      assertThatThrownBy(() -> h.provider.create(SandboxConfig.forProject("p").withCommand("npm start")))
          .hasMessageContaining("boot command");
      assertThat(h.api.requests("POST", "/v2/sandboxes")).isEmpty();
    }
  }
}
