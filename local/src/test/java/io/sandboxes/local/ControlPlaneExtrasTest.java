package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.internal.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The network-policy, metrics and logs endpoints, called as E2B's SDKs call them. */
@ExtendWith(SharedServer.class)
class ControlPlaneExtrasTest {

  private static HttpResponse<byte[]> call(LocalServer server, String method, String path, String body) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpRequest.Builder b = HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey());
      if (body != null) {
        b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
      } else {
        b.method(method, HttpRequest.BodyPublishers.noBody());
      }
      return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }
  }

  @Test
  @DisplayName("PUT network stores the policy and GET reports it; invalid entries are refused with 400; a missing sandbox is 404")
  void networkPolicy(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      HttpResponse<byte[]> put = call(server, "PUT", "/sandboxes/" + s.id() + "/network",
          "{\"allowOut\":[\"pypi.org\",\"*.npmjs.org\",\"10.1.0.0/16\"],\"denyOut\":[\"0.0.0.0/0\"],\"allow_internet_access\":false}");
      assertThat(put.statusCode()).isEqualTo(204);
      JsonNode detail = Json.parse(call(server, "GET", "/sandboxes/" + s.id(), null).body());
      assertThat(detail.path("network").path("allowOut")).extracting(JsonNode::asText)
          .containsExactly("pypi.org", "*.npmjs.org", "10.1.0.0/16");
      assertThat(detail.path("network").path("denyOut").get(0).asText()).isEqualTo("0.0.0.0/0");
      assertThat(detail.path("allowInternetAccess").asBoolean(true)).isFalse();

      HttpResponse<byte[]> badDeny = call(server, "PUT", "/sandboxes/" + s.id() + "/network", "{\"denyOut\":[\"example.com\"]}");
      assertThat(badDeny.statusCode()).isEqualTo(400);
      assertThat(Json.parse(badDeny.body()).path("code").asInt()).isEqualTo(400);
      assertThat(call(server, "PUT", "/sandboxes/" + s.id() + "/network", "{\"allowOut\":[\"not a host\"]}").statusCode()).isEqualTo(400);
      assertThat(call(server, "PUT", "/sandboxes/nosuchsandbox0000000/network", "{}").statusCode()).isEqualTo(404);
    }
  }

  @Test
  @DisplayName("metrics come from the container: memory limit, disk, CPU count; a paused sandbox takes no fresh sample")
  void metrics(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      HttpResponse<byte[]> r = call(server, "GET", "/sandboxes/" + s.id() + "/metrics", null);
      assertThat(r.statusCode()).isEqualTo(200);
      JsonNode m = Json.parse(r.body()).get(0);
      assertThat(m.path("cpuCount").asInt()).isEqualTo(2);
      assertThat(m.path("memTotal").asLong()).isEqualTo(1024L * 1024 * 1024);
      assertThat(m.path("memUsed").asLong()).isPositive().isLessThan(1024L * 1024 * 1024);
      assertThat(m.path("diskTotal").asLong()).isGreaterThan(m.path("diskUsed").asLong()).isPositive();
      assertThat(m.path("timestamp").asText()).endsWith("Z");
      s.pause();
      // a paused sandbox takes no fresh sample (its history stays; FidelityTest checks that none is added)
      long now = java.time.Instant.now().getEpochSecond() + 1;
      assertThat(Json.parse(call(server, "GET", "/sandboxes/" + s.id() + "/metrics?start=" + now, null).body())).isEmpty();
    }
  }

  @Test
  @DisplayName("refreshes extend the deadline (never shorten it) up to an hour; snapshots page with limit and X-Next-Token")
  void refreshesAndSnapshotPaging(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      java.time.Instant before = e2b.info(s.id()).endAt();
      assertThat(call(server, "POST", "/sandboxes/" + s.id() + "/refreshes", "{\"duration\":1800}").statusCode()).isEqualTo(204);
      java.time.Instant after = e2b.info(s.id()).endAt();
      assertThat(after).isAfter(before.plusSeconds(1000));
      assertThat(call(server, "POST", "/sandboxes/" + s.id() + "/refreshes", "{\"duration\":10}").statusCode()).isEqualTo(204);
      assertThat(e2b.info(s.id()).endAt()).isEqualTo(after);
      assertThat(call(server, "POST", "/sandboxes/" + s.id() + "/refreshes", "{\"duration\":3601}").statusCode()).isEqualTo(400);

      String a = e2b.createSnapshot(s.id(), "paging-a-" + s.id()).snapshotId();
      String b = e2b.createSnapshot(s.id(), "paging-b-" + s.id()).snapshotId();
      try {
        HttpResponse<byte[]> first = call(server, "GET", "/snapshots?sandboxID=" + s.id() + "&limit=1", null);
        assertThat(Json.parse(first.body())).hasSize(1);
        String token = first.headers().firstValue("X-Next-Token").orElseThrow();
        HttpResponse<byte[]> second = call(server, "GET", "/snapshots?sandboxID=" + s.id() + "&limit=1&nextToken=" + token, null);
        assertThat(Json.parse(second.body())).hasSize(1);
        assertThat(second.headers().firstValue("X-Next-Token")).isEmpty();
        assertThat(java.util.List.of(Json.parse(first.body()).get(0).path("snapshotID").asText(),
            Json.parse(second.body()).get(0).path("snapshotID").asText())).containsExactlyInAnyOrder(a, b);
      } finally {
        e2b.deleteTemplate(a);
        e2b.deleteTemplate(b);
      }
    }
  }

  @Test
  @DisplayName("the v2 logs endpoint gives the sandbox's lifecycle events")
  void logs(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      s.pause();
      e2b.connect(s.id());
      JsonNode logs = Json.parse(call(server, "GET", "/v2/sandboxes/" + s.id() + "/logs", null).body()).path("logs");
      assertThat(logs).extracting(l -> l.path("message").asText())
          .anyMatch(m -> m.startsWith("sandbox created"))
          .anyMatch(m -> m.startsWith("paused"))
          .anyMatch(m -> m.startsWith("resumed"));
      JsonNode searched = Json.parse(call(server, "GET", "/v2/sandboxes/" + s.id() + "/logs?search=paused&limit=5", null).body()).path("logs");
      assertThat(searched).hasSize(1);
    }
  }
}
