package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.EgressProbe;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.e2b.SnapshotInfo;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * E2B behaviours the official SDK relies on (issue 13): listing order, filters and paging; an
 * expired pre-signed URL; the metrics range; template alias lookup; the default egress. Real
 * server, real Docker, real HTTP.
 */
@ExtendWith(SharedServer.class)
class FidelityTest {

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

  private static String q(String v) {
    return URLEncoder.encode(v, StandardCharsets.UTF_8);
  }

  /** Every page of a v2 listing, as indexes into {@code ids}. */
  private static List<Integer> pages(LocalServer server, String query, List<String> ids) throws Exception {
    List<Integer> out = new ArrayList<>();
    String token = null;
    do {
      HttpResponse<byte[]> r = call(server, "GET", "/v2/sandboxes?" + query + (token == null ? "" : "&nextToken=" + q(token)), null);
      assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
      Json.parse(r.body()).forEach(n -> out.add(ids.indexOf(n.path("sandboxID").asText())));
      token = r.headers().firstValue("X-Next-Token").orElse(null);
    } while (token != null && !token.isEmpty());
    return out;
  }

  @Test
  @DisplayName("listing: order asc/desc over the whole result with paging, startedAfter and template narrow it; bad values are 400")
  void listing(E2BApi e2b, LocalServer server) throws Exception {
    String tag = "fid-" + Long.toHexString(System.nanoTime());
    SandboxSpec spec = SandboxSpec.defaults().withMetadata(Map.of("fid", tag)).withTimeout(Duration.ofMinutes(2));
    try (LiveSandbox first = e2b.create(spec)) {
      SnapshotInfo snap = first.snapshot(tag);
      try (LiveSandbox second = e2b.create(spec); LiveSandbox third = e2b.create(spec.withTemplate(snap.snapshotId()))) {
        List<String> ids = List.of(first.id(), second.id(), third.id());
        String mine = "metadata=" + q("fid=" + tag);
        assertThat(pages(server, mine, ids)).containsExactly(2, 1, 0);
        assertThat(pages(server, mine + "&order=desc&limit=2", ids)).containsExactly(2, 1, 0);
        assertThat(pages(server, mine + "&order=asc", ids)).containsExactly(0, 1, 2);
        assertThat(pages(server, mine + "&order=asc&limit=1", ids)).containsExactly(0, 1, 2);
        Instant secondStarted = e2b.info(second.id()).startedAt();
        assertThat(pages(server, mine + "&order=asc&startedAfter=" + q(secondStarted.toString()), ids)).containsExactly(1, 2);
        assertThat(pages(server, mine + "&startedAfter=" + q(Instant.now().plusSeconds(60).toString()), ids)).isEmpty();
        assertThat(pages(server, mine + "&template=" + q(tag), ids)).containsExactly(2);
        assertThat(pages(server, mine + "&template=" + q(snap.snapshotId()), ids)).containsExactly(2);
        assertThat(pages(server, mine + "&template=base&order=asc", ids)).containsExactly(0, 1);

        // the Java client's listing (newest first, paged) reads the same order
        List<SandboxInfo> listed = e2b.listAll(SandboxQuery.byMetadata("fid", tag).withLimit(1));
        assertThat(listed).extracting(SandboxInfo::id).containsExactly(third.id(), second.id(), first.id());

        assertThat(call(server, "GET", "/v2/sandboxes?order=sideways", null).statusCode()).isEqualTo(400);
        assertThat(call(server, "GET", "/v2/sandboxes?startedAfter=yesterday", null).statusCode()).isEqualTo(400);
        String descToken = call(server, "GET", "/v2/sandboxes?" + mine + "&limit=1", null).headers().firstValue("X-Next-Token").orElseThrow();
        assertThat(call(server, "GET", "/v2/sandboxes?" + mine + "&order=asc&nextToken=" + q(descToken), null).statusCode()).isEqualTo(400);
      } finally {
        first.kill();
        e2b.deleteTemplate(snap.snapshotId());
      }
    }
  }

  private static String sign(String path, String op, String user, String token, long expiration) throws Exception {
    byte[] digest = MessageDigest.getInstance("SHA-256")
        .digest((path + ":" + op + ":" + user + ":" + token + ":" + expiration).getBytes(StandardCharsets.UTF_8));
    return "v1_" + Base64.getEncoder().withoutPadding().encodeToString(digest);
  }

  private static HttpResponse<String> signed(LocalServer server, String method, String path, String op, String signature, long expiration,
      HttpRequest.BodyPublisher body, String contentType) throws Exception {
    URI uri = server.sandboxUrl().resolve("/files?path=" + q(path) + "&username=user&signature=" + q(signature)
        + "&signature_expiration=" + expiration);
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpRequest.Builder b = HttpRequest.newBuilder(uri).method(method, body);
      if (contentType != null) {
        b.header("Content-Type", contentType);
      }
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  @Test
  @DisplayName("an expired pre-signed URL is 401 'signature is already expired', for downloads and uploads; a wrong one is still no sandbox")
  void expiredSignedUrls(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      s.writeBytes("/home/user/signed.txt", "signed".getBytes(StandardCharsets.UTF_8));
      String token = Tokens.envdToken(server, s.id());
      String path = "/home/user/signed.txt";
      long fresh = Instant.now().getEpochSecond() + 60;
      HttpResponse<String> ok = signed(server, "GET", path, "read", sign(path, "read", "user", token, fresh), fresh,
          HttpRequest.BodyPublishers.noBody(), null);
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("signed");

      long past = Instant.now().getEpochSecond() - 5;
      HttpResponse<String> down = signed(server, "GET", path, "read", sign(path, "read", "user", token, past), past,
          HttpRequest.BodyPublishers.noBody(), null);
      assertThat(down.statusCode()).isEqualTo(401);
      assertThat(Json.parse(down.body().getBytes(StandardCharsets.UTF_8)).path("message").asText()).isEqualTo("signature is already expired");

      String boundary = "fidboundary";
      String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up.txt\"\r\n"
          + "Content-Type: application/octet-stream\r\n\r\nlate\r\n--" + boundary + "--\r\n";
      String upPath = "/home/user/up.txt";
      HttpResponse<String> up = signed(server, "POST", upPath, "write", sign(upPath, "write", "user", token, past), past,
          HttpRequest.BodyPublishers.ofString(multipart), "multipart/form-data; boundary=" + boundary);
      assertThat(up.statusCode()).isEqualTo(401);
      assertThat(Json.parse(up.body().getBytes(StandardCharsets.UTF_8)).path("message").asText()).isEqualTo("signature is already expired");
      assertThat(s.exec("test -e " + upPath).exitCode()).isEqualTo(1);

      // made with another token: no sandbox is found by it, expired or not
      HttpResponse<String> wrong = signed(server, "GET", path, "read", sign(path, "read", "user", "not-the-token", past), past,
          HttpRequest.BodyPublishers.noBody(), null);
      assertThat(wrong.statusCode()).isEqualTo(502);
    }
  }

  private static List<Long> sampleSeconds(LocalServer server, String id, String range) throws Exception {
    HttpResponse<byte[]> r = call(server, "GET", "/sandboxes/" + id + "/metrics" + range, null);
    assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
    List<Long> out = new ArrayList<>();
    Json.parse(r.body()).forEach(n -> out.add(n.path("timestampUnix").asLong()));
    return out;
  }

  @Test
  @DisplayName("metrics keep a history sampled every few seconds and answer start/end; before the sandbox existed is empty; paused adds none")
  void metricsRange(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      long created = e2b.info(s.id()).startedAt().getEpochSecond();
      assertThat(sampleSeconds(server, s.id(), "?start=" + (created - 3600) + "&end=" + (created - 3000))).isEmpty();
      // the sampler, not the request, makes the history: several samples at least 3 s apart
      List<Long> all = await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofSeconds(1))
          .until(() -> sampleSeconds(server, s.id(), ""), l -> l.size() >= 3);
      assertThat(all).isSorted();
      assertThat(all.get(all.size() - 1) - all.get(0)).isGreaterThanOrEqualTo(6);
      long firstSecond = all.get(0);
      assertThat(sampleSeconds(server, s.id(), "?start=" + firstSecond + "&end=" + firstSecond)).containsOnly(firstSecond).isNotEmpty();
      List<Long> later = sampleSeconds(server, s.id(), "?start=" + (firstSecond + 1));
      assertThat(later).isNotEmpty().allMatch(t -> t > firstSecond);
      assertThat(call(server, "GET", "/sandboxes/" + s.id() + "/metrics?start=10&end=5", null).statusCode()).isEqualTo(400);
      assertThat(call(server, "GET", "/sandboxes/" + s.id() + "/metrics?start=soon", null).statusCode()).isEqualTo(400);

      s.pause();
      long pausedAt = Instant.now().getEpochSecond();
      int kept = sampleSeconds(server, s.id(), "").size();
      assertThat(kept).isGreaterThanOrEqualTo(all.size());
      await().during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(12))
          .until(() -> sampleSeconds(server, s.id(), "?start=" + (pausedAt + 1)), List::isEmpty);
      assertThat(sampleSeconds(server, s.id(), "")).hasSize(kept);
    }
  }

  @Test
  @DisplayName("template alias lookup: base is public, a snapshot is found by name and id, anything else is 404")
  void aliasLookup(E2BApi e2b, LocalServer server) throws Exception {
    JsonNode base = Json.parse(call(server, "GET", "/templates/aliases/base", null).body());
    assertThat(base.path("templateID").asText()).isEqualTo("base");
    assertThat(base.path("public").asBoolean(false)).isTrue();
    HttpResponse<byte[]> missing = call(server, "GET", "/templates/aliases/no-such-template-here", null);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(Json.parse(missing.body()).path("code").asInt()).isEqualTo(404);
    String name = "fid-alias-" + Long.toHexString(System.nanoTime());
    try (LiveSandbox s = e2b.create()) {
      SnapshotInfo snap = s.snapshot(name);
      try {
        for (String alias : List.of(name, snap.snapshotId())) {
          HttpResponse<byte[]> r = call(server, "GET", "/templates/aliases/" + q(alias), null);
          assertThat(r.statusCode()).isEqualTo(200);
          assertThat(Json.parse(r.body()).path("templateID").asText()).isEqualTo(name + ":default");
          assertThat(Json.parse(r.body()).path("public").asBoolean(true)).isFalse();
        }
      } finally {
        e2b.deleteTemplate(snap.snapshotId());
      }
      assertThat(call(server, "GET", "/templates/aliases/" + name, null).statusCode()).isEqualTo(404);
    }
  }

  private static String egressLog(LocalServer server, String id) throws Exception {
    for (JsonNode l : Json.parse(call(server, "GET", "/v2/sandboxes/" + id + "/logs", null).body()).path("logs")) {
      if (l.path("message").asText().startsWith("egress: ")) {
        return l.path("message").asText();
      }
    }
    return "none";
  }

  private static String code(LiveSandbox s, String host) {
    return s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + host + "/").stdout().strip();
  }

  @Test
  @DisplayName("default egress: deny unless told here; with internetByDefault E2B's (open unless allow_internet_access is false); the log says which")
  void defaultEgress(E2BApi e2b, LocalServer shared) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      assertThat(egressLog(shared, s.id())).startsWith("egress: nothing reachable: allow_internet_access was not given")
          .contains("default is deny");
      assertThat(code(s, shared.egressProbe().deniedHost())).isEqualTo("000");
    }
    try (LocalServer open = LocalServer.builder().internetByDefault(true).build().start();
        E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(open.apiUrl()).sandboxUrl(open.sandboxUrl())
            .apiKey(open.apiKey()).build()) {
      assertThat(open.egressEnforced()).isTrue();
      EgressProbe p = open.egressProbe();
      try (LiveSandbox s = provider.api().create()) {
        assertThat(egressLog(open, s.id())).isEqualTo("egress: open, less denyOut: allow_internet_access was not given, and this server"
            + " applies E2B's default (open unless told otherwise)");
        // the witness no policy allows is reachable: egress is open
        assertThat(code(s, p.deniedHost())).isEqualTo("200");
      }
      HttpResponse<byte[]> closed = call(open, "POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":120,\"allow_internet_access\":false}");
      assertThat(closed.statusCode()).isEqualTo(201);
      String id = Json.parse(closed.body()).path("sandboxID").asText();
      try (LiveSandbox s = provider.api().connect(id)) {
        assertThat(egressLog(open, id)).isEqualTo("egress: nothing reachable (allow_internet_access: false, as asked)");
        assertThat(code(s, p.deniedHost())).isEqualTo("000");
        s.kill();
      }
    }
  }
}
