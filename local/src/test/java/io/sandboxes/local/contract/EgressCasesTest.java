package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.EgressProbe;
import io.sandboxes.EgressVerdict;
import io.sandboxes.EgressVerification;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Behaviour contract, section L (egress verification). The probe targets are local names and a
 * loopback IP: no probe from this machine is aimed at a public address.
 */
@ExtendWith(SharedServer.class)
class EgressCasesTest {
  static final EgressProbe LOCAL = new EgressProbe("witness-allowed.sandboxes.test", "witness-denied.sandboxes.test", "127.0.0.9",
      List.of("witness-allowed.sandboxes.test"), "http");

  private static Harness harness(LocalServer server) throws Exception {
    return new Harness(server, b -> b.egressProbe(LOCAL));
  }


  /** Scripts the curl of one target to print a code, as curl would. */
  private static void curlAnswers(Harness h, String target, String code) {
    String out = java.util.Base64.getEncoder().encodeToString(code.getBytes());
    h.envd.on(r -> r.path().equals("/process.Process/Start") && Wire.command(r).startsWith("curl") && Wire.command(r).contains("//" + target + "/"),
        FaultServer.stream(FaultServer.Step.send(0, "{\"event\":{\"start\":{\"pid\":77}}}"),
            FaultServer.Step.send(0, "{\"event\":{\"data\":{\"stdout\":\"" + out + "\"}}}"),
            FaultServer.Step.send(0, "{\"event\":{\"end\":{\"exitCode\":" + ("000".equals(code) ? 7 : 0)
                + ",\"exited\":true,\"status\":\"exit status 0\"}}}"),
            FaultServer.Step.end(0, "{}")));
  }

  @Test
  @DisplayName("case 134, case 137, case 138: the probe sandbox is created to be killed, gets the probe's own deny-by-default allow-list, runs the three curls, and is destroyed")
  void procedure(LocalServer server) throws Exception {
    try (Harness h = new Harness(server, b -> b.egressProbe(LOCAL).defaultAllowOut(List.of("pypi.org")))) {
      EgressVerdict verdict = h.provider.capability(EgressVerification.class).orElseThrow().verifyEgress();
      // a local sandbox has no network yet: the honest verdict is inconclusive, never filtered
      assertThat(verdict.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(verdict.detail()).contains("probe sandbox had no network");
      JsonNode create = Json.parse(h.api.requests("POST", "/v2/sandboxes").get(0).body());
      assertThat(create.has("autoPause")).isFalse();
      assertThat(create.path("metadata").path("projectId").asText()).startsWith("egress-probe-");
      assertThat(create.path("envVars").size()).isZero();
      String id = h.api.requests("PUT", "/sandboxes/").get(0).path().split("/")[2];
      // the first update the probe sandbox gets is the probe's own, whatever the configured
      // allow-list (pypi.org here) says, and it is the only one
      List<FaultServer.Recorded> puts = h.api.requests("PUT", "/sandboxes/" + id + "/network");
      assertThat(puts).hasSize(1);
      JsonNode first = Json.parse(puts.get(0).body());
      assertThat(first.path("allowOut")).extracting(JsonNode::asText).containsExactly("witness-allowed.sandboxes.test");
      assertThat(first.path("denyOut")).extracting(JsonNode::asText).containsExactly("0.0.0.0/0");
      // and it comes before the first curl
      long firstCurl = h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> Wire.command(r).startsWith("curl"))
          .mapToLong(FaultServer.Recorded::atNanos).min().orElseThrow();
      assertThat(puts.get(0).atNanos()).isLessThan(firstCurl);
      assertThat(h.envd.requests("POST", "/process.Process/Start").stream().map(Wire::command)
          .filter(c -> c.startsWith("curl")).toList()).containsExactly(
          "curl -s -o /dev/null -m 8 -w '%{http_code}' -p http://witness-allowed.sandboxes.test/",
          "curl -s -o /dev/null -m 8 -w '%{http_code}' -p http://witness-denied.sandboxes.test/",
          "curl -s -o /dev/null -m 8 -w '%{http_code}' -p http://127.0.0.9/");
      assertThat(h.api.requests("DELETE", "/sandboxes/" + id)).hasSize(1);
      assertThat(h.provider.describe(id)).isEmpty();
      try (Sandbox normal = h.provider.create(SandboxConfig.forProject("proj-1"))) {
        List<FaultServer.Recorded> creates = h.api.requests("POST", "/v2/sandboxes");
        assertThat(Json.parse(creates.get(creates.size() - 1).body()).path("autoPause").asBoolean()).isTrue();
      }
    }
  }

  @Test
  @DisplayName("case 135: end to end, 000/000/000 is inconclusive, 200/000/000 filtered, 200/200/000 open")
  void endToEnd(LocalServer server) throws Exception {
    String[][] runs = {{"000", "000", "000", "INCONCLUSIVE"}, {"200", "000", "000", "FILTERED"}, {"200", "200", "000", "OPEN"}};
    for (String[] run : runs) {
      try (Harness h = harness(server)) {
        curlAnswers(h, LOCAL.allowedHost(), run[0]);
        curlAnswers(h, LOCAL.deniedHost(), run[1]);
        curlAnswers(h, LOCAL.rawIp(), run[2]);
        assertThat(h.provider.verifyEgress().state()).isEqualTo(EgressVerdict.State.valueOf(run[3]));
      }
    }
  }

  @Test
  @DisplayName("case 6, case 136: no probe sandbox, or a probe that cannot run, is inconclusive and never throws")
  void failures(LocalServer server) throws Exception {
    try (E2BSandboxProvider keyless = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).environment(Map.of()).egressProbe(LOCAL).build()) {
      EgressVerdict v = keyless.verifyEgress();
      assertThat(v.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(v.detail()).isEqualTo("Could not create a probe sandbox: E2B provider requires an API key (config.apiKey or E2B_API_KEY)");
      assertThat(v.remediation()).isEqualTo("Check E2B_API_KEY and account capacity.");
    }
    try (Harness h = harness(server)) {
      h.api.on(FaultServer.route("POST", "/v2/sandboxes"), FaultServer.json(429, "{\"code\":429,\"message\":\"quota reached\"}"));
      EgressVerdict v = h.provider.verifyEgress();
      assertThat(v.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(v.detail()).startsWith("Could not create a probe sandbox: ").contains("quota reached");
      assertThat(h.api.requests("DELETE", "/sandboxes/")).isEmpty();
    }
    try (Harness h = harness(server)) {
      h.api.on(FaultServer.route("PUT", "/sandboxes/.*/network"), FaultServer.json(500, "{\"code\":500,\"message\":\"policy broke\"}"));
      EgressVerdict v = h.provider.verifyEgress();
      assertThat(v.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(v.detail()).startsWith("Egress probe could not run: ").contains("policy broke");
      assertThat(h.api.requests("DELETE", "/sandboxes/")).hasSize(1);
    }
  }

  @Test
  @DisplayName("case 138: a destroy that fails once is retried and the verdict stands; failing twice names the sandbox left behind")
  void destroyRetry(LocalServer server) throws Exception {
    try (Harness h = harness(server)) {
      int[] deletes = {0};
      h.api.on(FaultServer.route("DELETE", "/sandboxes/.*"), (req, resp, cb) ->
          ++deletes[0] == 1 && FaultServer.json(500, "{\"code\":500,\"message\":\"flaky\"}").answer(req, resp, cb));
      EgressVerdict v = h.provider.verifyEgress();
      assertThat(v.detail()).doesNotContain("left behind");
      assertThat(h.api.requests("DELETE", "/sandboxes/")).hasSize(2);
    }
    try (Harness h = harness(server)) {
      h.api.on(FaultServer.route("DELETE", "/sandboxes/.*"), FaultServer.json(500, "{\"code\":500,\"message\":\"kill refused\"}"));
      EgressVerdict v = h.provider.verifyEgress();
      String id = h.api.requests("PUT", "/sandboxes/").get(0).path().split("/")[2];
      assertThat(v.state()).isEqualTo(EgressVerdict.State.INCONCLUSIVE);
      assertThat(v.detail()).endsWith(" (The probe sandbox " + id + " could not be destroyed and is left behind: "
          + "kill sandbox " + id + " failed: HTTP 500: kill refused.)");
      h.api.clearFaults();
      h.provider.destroy(id);
    }
  }
}
