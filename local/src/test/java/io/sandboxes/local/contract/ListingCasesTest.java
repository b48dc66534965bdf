package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeQuery;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Behaviour contract, section C: listing, against the real local server and scripted listings. */
@ExtendWith(SharedServer.class)
class ListingCasesTest {

  static String row(String id, String state) {
    return "{\"sandboxID\":\"" + id + "\",\"templateID\":\"base\",\"clientID\":\"x\",\"state\":\"" + state + "\","
        + "\"startedAt\":\"2026-08-15T10:00:00Z\",\"endAt\":\"2026-08-15T11:00:00Z\",\"cpuCount\":2,\"memoryMB\":512,"
        + "\"envdVersion\":\"0.6.13\",\"metadata\":{}}";
  }

  static String sandbox(String id) {
    return "{\"sandboxID\":\"" + id + "\",\"templateID\":\"base\",\"clientID\":\"x\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"t\"}";
  }

  static String listing(List<String> ids) {
    return "[" + String.join(",", ids.stream().map(id -> row(id, "running")).toList()) + "]";
  }

  static List<String> ids(int n) {
    return IntStream.range(0, n).mapToObj(i -> String.format("row%017d", i)).toList();
  }

  @Test
  @DisplayName("issue 24 item 6, cases 30-32: 40 running rows come back in listing order from the one listing request; nothing is asked per sandbox")
  void oneRequestPerPage(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(40);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.clearRequests();
      h.envd.clearRequests();
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactlyElementsOf(ids);
      // E2B's SDK lists with one request a page; this client asked nothing else, of either server
      assertThat(h.api.requests()).extracting(FaultServer.Recorded::path).containsExactly("/v2/sandboxes");
      assertThat(h.api.requests().get(0).query()).contains("state=running");
      assertThat(h.envd.requests()).isEmpty();
    }
  }

  @Test
  @DisplayName("case 33: a sandbox gone since the listing is listed as the server listed it; its first call says it is gone, the others work")
  void goneSinceListing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox real = h.provider.create(SandboxConfig.forProject("case33-" + System.nanoTime()));
      try {
        String gone = "rowg0000000000000000";
        h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(List.of(real.id(), gone))));
        h.api.on(FaultServer.route("GET", "/sandboxes/" + gone), FaultServer.json(404, "{\"code\":404,\"message\":\"gone\"}"));
        List<Sandbox> listed = h.provider.list();
        assertThat(listed).extracting(Sandbox::id).containsExactly(real.id(), gone);
        assertThatThrownBy(() -> listed.get(1).exec("true")).isInstanceOfSatisfying(io.sandboxes.SandboxNotFoundException.class,
            e -> assertThat(e.getMessage()).contains(gone));
        assertThat(listed.get(0).exec("echo still here").stdout()).isEqualTo("still here\n");
      } finally {
        real.close();
      }
    }
  }

  @Test
  @DisplayName("case 34: a first call whose record read fails throws that failure (typed), and the next call looks again")
  void failedLookIsNotKept(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox real = h.provider.create(SandboxConfig.forProject("case34-" + System.nanoTime()));
      try {
        AtomicInteger refused = new AtomicInteger();
        // the record read is refused once with E2B's 503, then let through to the real server
        h.api.on(FaultServer.route("GET", "/sandboxes/" + real.id()), (req, resp, cb) -> refused.getAndIncrement() == 0
            && FaultServer.json(503, "{\"code\":503,\"message\":\"no capacity\"}").answer(req, resp, cb));
        Sandbox listed = h.provider.list().stream().filter(s -> s.id().equals(real.id())).findFirst().orElseThrow();
        assertThatThrownBy(() -> listed.exec("true")).isInstanceOf(io.sandboxes.SandboxServiceBusyException.class)
            .hasMessageContaining("no capacity");
        assertThat(listed.exec("echo second look").stdout()).isEqualTo("second look\n");
        assertThat(refused.get()).as("record reads").isEqualTo(2);
        // looked once for good: later calls ask the control plane nothing
        listed.exec("true");
        assertThat(refused.get()).isEqualTo(2);
      } finally {
        real.close();
      }
    }
  }

  @Test
  @DisplayName("issue 24 item 6, issue 13 item 9: a client clock ahead of the server's still lists what the server lists; a record without a daemon token is connected on first use asking for 1 s, and no deadline moves")
  void clockAheadAndRecordWithoutToken(LocalServer server, io.sandboxes.e2b.E2BSandboxProvider direct) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox real = h.provider.create(SandboxConfig.forProject("clock-" + System.nanoTime()).withTimeout(Duration.ofMinutes(10)));
      try {
        java.time.Instant deadline = direct.describe(real.id()).orElseThrow().endAt();
        // as a client whose clock runs an hour ahead of the server's sees them: the server lists
        // the sandbox as running, with an end an hour in the client's past; and its record (as
        // some servers give it) carries no daemon token
        String endAt = java.time.Instant.now().minus(Duration.ofHours(1)).toString();
        String seen = row(real.id(), "running").replace("2026-08-15T11:00:00Z", endAt);
        h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "[" + seen + "]"));
        h.api.on(FaultServer.route("GET", "/sandboxes/" + real.id()), FaultServer.json(200, seen));
        h.api.clearRequests();
        List<Sandbox> listed = h.provider.list();
        assertThat(listed).extracting(Sandbox::id).containsExactly(real.id());
        assertThat(h.api.requests()).extracting(FaultServer.Recorded::path).containsExactly("/v2/sandboxes");

        assertThat(listed.get(0).exec("echo listed").stdout()).isEqualTo("listed\n");
        List<FaultServer.Recorded> connects = h.api.requests("POST", "/v2/sandboxes/" + real.id() + "/connect");
        assertThat(connects).hasSize(1);
        assertThat(io.sandboxes.e2b.internal.Json.parse(connects.get(0).body()).path("timeout").asLong()).isEqualTo(1L);
        // connect only extends: asking for one second left the ten minutes where they were
        assertThat(direct.describe(real.id()).orElseThrow().endAt()).isEqualTo(deadline);
      } finally {
        real.close();
      }
    }
  }

  @Test
  @DisplayName("case 35: an empty listing is [], with no connects or record reads; every volume is unattached; no template is in use")
  void emptyListing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String name = "case35-" + System.nanoTime() % 1_000_000;
      h.provider.createVolume(name);
      Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(name, "/data"));
      try {
        h.provider.commitTemplate(io.sandboxes.TemplateCommit.of(s.id(), name));
        h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "[]"));
        h.api.clearRequests();
        assertThat(h.provider.list()).isEmpty();
        assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
        assertThat(h.api.requests("GET", "/sandboxes/")).isEmpty();
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(name))).singleElement()
            .satisfies(v -> assertThat(v.attached()).isFalse());
        assertThat(h.provider.listTemplates(name)).singleElement().satisfies(t -> assertThat(t.inUse()).isFalse());
        assertThat(h.provider.getTemplate(name).orElseThrow().inUse()).isFalse();
      } finally {
        h.api.clearFaults();
        s.close();
        h.provider.removeTemplate(name);
        h.provider.removeVolume(name);
      }
    }
  }

  @Test
  @DisplayName("case 36, case 37, case 38: a failed listing, one of an unknown shape, and a null one all throw, from list and listTemplates alike")
  void unreadableListings(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), (req, resp, cb) -> {
        resp.setStatus(502);
        resp.write(true, java.nio.ByteBuffer.wrap("connect ECONNRESET".getBytes(StandardCharsets.UTF_8)), cb);
        return true;
      });
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("ECONNRESET");
      assertThatThrownBy(() -> h.provider.listTemplates(null)).hasMessageContaining("ECONNRESET");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "{\"items\":[" + row("sbx-1", "running") + "]}"));
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("shape this client cannot read").hasMessageContaining("items");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "null"));
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("shape this client cannot read");
      assertThatThrownBy(() -> h.provider.listVolumes(VolumeQuery.all())).hasMessageContaining("shape this client cannot read");
    }
  }

  @Test
  @DisplayName("case 39, case 40: every page of the listing is read and flattened in order")
  void pages(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(4);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), (req, resp, cb) -> {
        boolean second = req.query().contains("nextToken=page2");
        if (!second) {
          resp.getHeaders().put("X-Next-Token", "page2");
        }
        return FaultServer.json(200, listing(second ? ids.subList(2, 4) : ids.subList(0, 2))).answer(req, resp, cb);
      });
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      h.api.clearRequests();
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactlyElementsOf(ids);
      // one request a page, and nothing else
      assertThat(h.api.requests()).extracting(FaultServer.Recorded::path).containsExactly("/v2/sandboxes", "/v2/sandboxes");
    }
  }

  @Test
  @DisplayName("case 41: rows without a sandbox id are dropped; the others keep id, state, template, name and volume mounts")
  void rowNormalisation(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String withMount = row("rowm0000000000000000", "running").replace("\"metadata\":{}",
          "\"metadata\":{},\"alias\":\"node-app\",\"volumeMounts\":[{\"name\":\"v1\",\"path\":\"/data\"}]");
      String paused = row("rowp0000000000000000", "paused").replace("\"templateID\":\"base\"", "\"templateID\":\"tpl-7\"");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200,
          "[" + withMount + ",{\"templateID\":\"base\",\"state\":\"running\"}," + paused + "]"));
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      List<io.sandboxes.SandboxInfo> rows = h.provider.api().listAll(io.sandboxes.e2b.SandboxQuery.all());
      assertThat(rows).extracting(io.sandboxes.SandboxInfo::id).containsExactly("rowm0000000000000000", "rowp0000000000000000");
      assertThat(rows.get(0)).satisfies(r -> {
        assertThat(r.state()).isEqualTo(io.sandboxes.SandboxState.RUNNING);
        assertThat(r.templateId()).isEqualTo("base");
        assertThat(r.alias()).isEqualTo("node-app");
        assertThat(r.volumeMounts()).containsExactly(new io.sandboxes.VolumeMount("v1", "/data"));
      });
      assertThat(rows.get(1)).satisfies(r -> {
        assertThat(r.state()).isEqualTo(io.sandboxes.SandboxState.PAUSED);
        assertThat(r.templateId()).isEqualTo("tpl-7");
        assertThat(r.alias()).isNull();
        assertThat(r.volumeMounts()).isEmpty();
      });
      // list() keeps the running one only, from the listing alone: no record read, no connect
      h.api.clearRequests();
      assertThat(h.provider.list()).extracting(Sandbox::id).containsExactly("rowm0000000000000000");
      assertThat(h.api.requests("GET", "/sandboxes/")).isEmpty();
      assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
    }
  }

  @Test
  @DisplayName("case 43: the lookups behind volumes and templates count paused sandboxes too, without connecting to any")
  void lookupsIncludePaused(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String vol = "case43-" + System.nanoTime() % 1_000_000;
      h.provider.createVolume(vol);
      Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(vol, "/data"));
      try {
        s.hibernate();
        h.api.clearRequests();
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(vol))).singleElement()
            .satisfies(v -> assertThat(v.attached()).isTrue());
        assertThat(h.api.requests("POST", "/sandboxes/")).isEmpty();
        assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
      } finally {
        s.close();
        h.provider.removeVolume(vol);
      }
    }
  }
}
