package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.HibernationOutcome;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxState;
import io.sandboxes.TemplateCommit;
import io.sandboxes.TemplateDescriptor;
import io.sandboxes.TemplateManagement;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeManagement;
import io.sandboxes.VolumeQuery;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Behaviour contract, sections J (volumes), K (templates) and M (hibernate/resume). */
@ExtendWith(SharedServer.class)
class DurabilityCasesTest {

  private static String unique(String prefix) {
    return prefix + UUID.randomUUID().toString().substring(0, 8);
  }

  @Test
  @DisplayName("case 105, case 106, case 107: a volume needs a mount path (nothing is created without one); it is mounted where asked; no volume sends no mounts")
  void mounts(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String vol = unique("mol-project-");
      SandboxConfig noPath = new SandboxConfig("p1", null, java.util.Map.of(), java.util.Map.of(), vol, null, null, null);
      assertThatThrownBy(() -> h.provider.create(noPath)).hasMessageContaining("volumeMountPath").hasMessageContaining(vol);
      assertThat(h.api.requests("POST", "/v2/sandboxes")).isEmpty();
      try (Sandbox plain = h.provider.create(SandboxConfig.forProject("p1"))) {
        assertThat(Json.parse(h.api.requests("POST", "/v2/sandboxes").get(0).body()).has("volumeMounts")).isFalse();
      }
      h.provider.createVolume(vol);
      try (Sandbox s = h.provider.create(SandboxConfig.forProject("p1").withVolume(vol, "/workspace/my-app"))) {
        JsonNode body = Json.parse(h.api.requests("POST", "/v2/sandboxes").get(1).body());
        assertThat(body.path("volumeMounts").get(0).path("name").asText()).isEqualTo(vol);
        assertThat(body.path("volumeMounts").get(0).path("path").asText()).isEqualTo("/workspace/my-app");
        s.writeFile("/workspace/my-app/kept.txt", "on the volume");
      }
      h.provider.removeVolume(vol);
    }
  }

  @Test
  @DisplayName("case 108, case 109, case 110: createVolume is idempotent; removeVolume goes by name and an absent volume is success; volumeExists says true and false")
  void volumeLifecycle(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      VolumeManagement volumes = h.provider.capability(VolumeManagement.class).orElseThrow();
      String name = unique("mol-project-");
      volumes.createVolume(name);
      String id = volumes.listVolumes(VolumeQuery.prefixed(name)).get(0).id();
      volumes.createVolume(name);
      assertThat(volumes.listVolumes(VolumeQuery.prefixed(name))).singleElement().satisfies(v -> assertThat(v.id()).isEqualTo(id));
      assertThat(h.api.requests("POST", "/volumes")).hasSize(1);
      assertThat(volumes.volumeExists(name)).isTrue();
      assertThat(volumes.volumeExists(name + "-other")).isFalse();
      volumes.removeVolume(name);
      assertThat(h.api.requests("DELETE", "/volumes/" + id)).hasSize(1);
      assertThat(volumes.volumeExists(name)).isFalse();
      volumes.removeVolume(name);
    }
  }

  @Test
  @DisplayName("case 111, case 112, case 115, case 149: a volume lookup that cannot look throws, never answers false or []; a 403 propagates")
  void volumeFailures(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/volumes"), FaultServer.json(503, "{\"code\":503,\"message\":\"E2B is unreachable\"}"));
      assertThatThrownBy(() -> h.provider.volumeExists("x")).hasMessageContaining("unreachable");
      assertThatThrownBy(() -> h.provider.listVolumes(VolumeQuery.all())).hasMessageContaining("unreachable");
      assertThatThrownBy(() -> h.provider.createVolume("x")).hasMessageContaining("unreachable");
      assertThatThrownBy(() -> h.provider.removeVolume("x")).hasMessageContaining("unreachable");
      h.api.on(FaultServer.route("GET", "/volumes"), FaultServer.json(403, "{\"code\":403,\"message\":\"volumes not enabled\"}"));
      assertThatThrownBy(() -> h.provider.volumeExists("x"))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(403));
      h.api.clearFaults();
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(500, "{\"code\":500,\"message\":\"listing broke\"}"));
      assertThatThrownBy(() -> h.provider.listVolumes(VolumeQuery.all())).hasMessageContaining("listing broke");
    }
  }

  @Test
  @DisplayName("case 113, case 114: attached comes from running and paused sandboxes; filters by prefix and attachment; size and creation time are not invented")
  void attached(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String prefix = unique("mol-") + "-";
      String live = prefix + "live";
      String paused = prefix + "paused";
      String orphan = prefix + "orphan";
      String other = unique("other-thing-");
      for (String v : List.of(live, paused, orphan, other)) {
        h.provider.createVolume(v);
      }
      Sandbox a = h.provider.create(SandboxConfig.forProject("p").withVolume(live, "/data"));
      Sandbox b = h.provider.create(SandboxConfig.forProject("p").withVolume(paused, "/data"));
      try {
        b.hibernate();
        List<VolumeDescriptor> all = h.provider.listVolumes(VolumeQuery.prefixed(prefix));
        assertThat(all).extracting(VolumeDescriptor::name, VolumeDescriptor::attached)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(live, true), org.assertj.core.groups.Tuple.tuple(orphan, false),
                org.assertj.core.groups.Tuple.tuple(paused, true));
        assertThat(all).allSatisfy(v -> {
          assertThat(v.createdAt()).isNull();
          assertThat(v.sizeBytes()).isNull();
        });
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(prefix).withAttached(false))).extracting(VolumeDescriptor::name)
            .containsExactly(orphan);
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(prefix).withAttached(true))).extracting(VolumeDescriptor::name)
            .containsExactlyInAnyOrder(live, paused);
        assertThat(h.provider.listVolumes(VolumeQuery.all()).size()).isGreaterThanOrEqualTo(4);
      } finally {
        a.close();
        b.close();
        for (VolumeDescriptor v : h.provider.listVolumes(VolumeQuery.prefixed(prefix))) {
          h.provider.removeVolume(v.name());
        }
        h.provider.removeVolume(other);
      }
    }
  }

  @Test
  @DisplayName("case 116, case 117, case 120, case 121, case 123, case 124, case 125, case 126: templates under the caller's id: commit, re-commit replaces, get, list by prefix, in use, remove")
  void templates(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      TemplateManagement templates = h.provider.capability(TemplateManagement.class).orElseThrow();
      String id = unique("mol-project-");
      String other = unique("warm-base-");
      Sandbox source = h.provider.create(SandboxConfig.forProject("p"));
      try {
        source.writeFile("/home/user/v.txt", "1");
        h.api.clearRequests();
        Instant before = Instant.now().minusSeconds(1);
        TemplateDescriptor t = templates.commitTemplate(new TemplateCommit(source.id(), id, "restore point", List.of()));
        assertThat(h.api.requests("GET", "/sandboxes/")).isEmpty();
        assertThat(t.id()).isEqualTo(id);
        assertThat(t.ref()).isEqualTo(id + ":default");
        assertThat(t.label()).isEqualTo("restore point");
        assertThat(t.sizeBytes()).isNull();
        assertThat(t.inUse()).isTrue();
        assertThat(Instant.parse(t.createdAt())).isAfter(before);
        assertThat(t.createdAt()).matches(".*\\.\\d{3}Z");
        assertThat(templates.commitTemplate(TemplateCommit.of(source.id(), id)).label()).isNull();
        assertThat(h.api.requests("POST", "/sandboxes/" + source.id() + "/snapshots")).hasSize(2)
            .allSatisfy(r -> assertThat(Json.parse(r.body()).path("name").asText()).isEqualTo(id));
        assertThat(templates.listTemplates(id)).hasSize(1);

        TemplateDescriptor got = templates.getTemplate(id).orElseThrow();
        assertThat(got.id()).isEqualTo(id);
        assertThat(got.ref()).isEqualTo(id + ":default");
        assertThat(got.inUse()).isFalse();
        assertThat(templates.getTemplate(id + "-absent")).isEmpty();

        try (Sandbox child = h.provider.create(SandboxConfig.forProject("p").withTemplate(id))) {
          assertThat(child.readFile("/home/user/v.txt")).isEqualTo("1");
          assertThat(templates.getTemplate(id).orElseThrow().inUse()).isTrue();
          child.hibernate();
          assertThat(templates.getTemplate(id).orElseThrow().inUse()).isTrue();
          assertThat(templates.listTemplates(id)).singleElement().satisfies(x -> assertThat(x.inUse()).isTrue());
          assertThatThrownBy(() -> templates.removeTemplate(id)).hasMessageContaining("currently running");
          assertThat(h.api.requests("DELETE", "/templates/")).isEmpty();
        }
        templates.commitTemplate(TemplateCommit.of(source.id(), other));
        // a prefix that reaches into this run's random part: templates of other runs on this Docker
        // engine (a run that died midway, another checkout's tests) share "mol-project-"
        assertThat(templates.listTemplates(id.substring(0, id.length() - 2))).extracting(TemplateDescriptor::id).containsExactly(id);
        templates.removeTemplate(id);
        assertThat(h.api.requests("DELETE", "/templates/")).singleElement()
            .satisfies(r -> assertThat(r.path()).isEqualTo("/templates/" + id + ":default"));
        templates.removeTemplate(id);
        assertThat(h.api.requests("DELETE", "/templates/")).hasSize(1);
        templates.removeTemplate(other);
      } finally {
        source.close();
        for (String made : List.of(id, other)) {
          try {
            templates.removeTemplate(made);
          } catch (RuntimeException alreadyGone) {
            // removed above, or never made: nothing of this test is left behind either way
          }
        }
      }
    }
  }

  @Test
  @DisplayName("case 118, case 119: capture paths on a mounted volume are refused (a '/' boundary decides), with no snapshot taken; paths beside it are fine")
  void capturePaths(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String vol = unique("mol-project-");
      h.provider.createVolume(vol);
      Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(vol, "/workspace/my-app"));
      String id = unique("cap-");
      try {
        for (String path : List.of("/workspace/my-app", "/workspace/my-app/api")) {
          assertThatThrownBy(() -> h.provider.commitTemplate(new TemplateCommit(s.id(), id, null, List.of(path))))
              .hasMessageContaining("mounted volume").hasMessageContaining(path).hasMessageContaining(vol);
        }
        assertThat(h.api.requests("POST", "/sandboxes/" + s.id() + "/snapshots")).isEmpty();
        h.provider.commitTemplate(new TemplateCommit(s.id(), id, null, List.of("/workspace/my-app2", "/home/user")));
        assertThat(h.api.requests("POST", "/sandboxes/" + s.id() + "/snapshots")).hasSize(1);
        assertThat(h.api.requests("GET", "/sandboxes/" + s.id())).hasSize(3);
      } finally {
        s.close();
        h.provider.removeTemplate(id);
        h.provider.removeVolume(vol);
      }
    }
  }

  @Test
  @DisplayName("case 122, case 125, case 149: getTemplate and listTemplates throw when either lookup fails, never answering absent or unused")
  void templateFailures(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/snapshots"), FaultServer.json(503, "{\"code\":503,\"message\":\"snapshots down\"}"));
      assertThatThrownBy(() -> h.provider.getTemplate("x")).hasMessageContaining("snapshots down");
      assertThatThrownBy(() -> h.provider.listTemplates(null)).hasMessageContaining("snapshots down");
      assertThatThrownBy(() -> h.provider.removeTemplate("x")).hasMessageContaining("snapshots down");
      h.api.clearFaults();
      h.api.on(FaultServer.route("GET", "/snapshots"), FaultServer.json(200, "[{\"snapshotID\":\"team/x:default\",\"names\":[\"team/x\"]}]"));
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(500, "{\"code\":500,\"message\":\"listing broke\"}"));
      assertThatThrownBy(() -> h.provider.getTemplate("x")).hasMessageContaining("listing broke");
    }
  }

  @Test
  @DisplayName("case 124: the caller's id comes out of E2B's namespaced reference")
  void bareNames(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/snapshots"), FaultServer.json(200, "["
          + "{\"snapshotID\":\"molecules-project/mol-project-p1:default\",\"names\":[\"molecules-project/mol-project-p1\"]},"
          + "{\"snapshotID\":\"team/x:v2\",\"names\":[]},"
          + "{\"snapshotID\":\"plain\",\"names\":[]},"
          + "{\"snapshotID\":\"team/warm-base:default\",\"names\":[\"team/warm-base:default\"]}]"));
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "[]"));
      assertThat(h.provider.listTemplates(null)).extracting(TemplateDescriptor::id, TemplateDescriptor::ref).containsExactly(
          org.assertj.core.groups.Tuple.tuple("mol-project-p1", "molecules-project/mol-project-p1:default"),
          org.assertj.core.groups.Tuple.tuple("x", "team/x:v2"),
          org.assertj.core.groups.Tuple.tuple("plain", "plain"),
          org.assertj.core.groups.Tuple.tuple("warm-base", "team/warm-base:default"));
      assertThat(h.provider.listTemplates("mol-project-")).extracting(TemplateDescriptor::id).containsExactly("mol-project-p1");
      assertThat(h.provider.getTemplate("mol-project-p1").orElseThrow().createdAt()).isNull();
    }
  }

  @Test
  @DisplayName("case 139, case 140, case 144: hibernate pauses with processes kept and the handle sleeps; already paused is success with a detail; stop and sleep pause too")
  void hibernate(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      HibernationOutcome first = s.hibernate();
      assertThat(first).isEqualTo(new HibernationOutcome(true, "pause", null));
      assertThat(s.status()).isEqualTo(SandboxState.PAUSED);
      assertThat(s.hibernate()).isEqualTo(new HibernationOutcome(true, "pause", "the sandbox was already paused"));
      s.stop();
      s.sleep();
      assertThat(h.api.requests("POST", "/sandboxes/" + s.id() + "/pause")).hasSize(4)
          .allSatisfy(r -> assertThat(Json.parse(r.body()).path("memory").asBoolean()).isTrue());
    }
  }

  @Test
  @DisplayName("case 141, case 142: a failed pause propagates and the status stays running")
  void failedPause(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      h.api.on(FaultServer.route("POST", "/sandboxes/.*/pause"), FaultServer.json(502, "{\"code\":502,\"message\":\"Bad Gateway\"}"));
      assertThatThrownBy(s::hibernate).isInstanceOf(SandboxException.class).hasMessageContaining("Bad Gateway");
      assertThat(s.status()).isEqualTo(SandboxState.RUNNING);
      h.api.on(FaultServer.route("POST", "/sandboxes/.*/pause"), FaultServer.json(501, "{\"code\":501,\"message\":\"pause is not supported\"}"));
      assertThatThrownBy(s::hibernate).hasMessageContaining("not supported");
      assertThat(s.status()).isEqualTo(SandboxState.RUNNING);
    }
  }

  @Test
  @DisplayName("case 143: there is one pause endpoint on the wire; no deprecated fallback is needed or taken")
  void onePauseEndpoint(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      s.hibernate();
      assertThat(h.api.requests().stream().filter(r -> r.method().equals("POST") && r.path().contains("/pause")).map(r -> r.path()))
          .containsExactly("/sandboxes/" + s.id() + "/pause");
    }
  }

  @Test
  @DisplayName("case 145: resume (and wake, start) reconnects with the default timeout, later calls use the new connection, status is running; a failed connect propagates")
  void resume(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      String pid = s.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
      s.hibernate();
      assertThat(s.resume()).isEqualTo(new HibernationOutcome(true, "resume", null));
      assertThat(s.status()).isEqualTo(SandboxState.RUNNING);
      assertThat(s.exec("ps -o args= -p " + pid).stdout()).isEqualTo("sleep 600\n");
      assertThat(Json.parse(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect").get(0).body()).path("timeout").asLong()).isEqualTo(3600);
      s.sleep();
      s.wake();
      s.stop();
      s.start();
      assertThat(h.api.requests("POST", "/v2/sandboxes/" + s.id() + "/connect")).hasSize(3);
      h.api.on(FaultServer.route("POST", "/v2/sandboxes/.*/connect"), FaultServer.json(503, "{\"code\":503,\"message\":\"no capacity\"}"));
      s.hibernate();
      assertThatThrownBy(s::resume).hasMessageContaining("no capacity");
      assertThat(s.status()).isEqualTo(SandboxState.PAUSED);
    }
  }
}
