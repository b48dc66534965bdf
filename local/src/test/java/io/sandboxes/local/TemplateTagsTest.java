package io.sandboxes.local;

import static io.sandboxes.local.TemplateBuildTest.build;
import static io.sandboxes.local.TemplateBuildTest.call;
import static io.sandboxes.local.TemplateBuildTest.step;
import static io.sandboxes.local.TemplateBuildTest.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.dockerjava.api.DockerClient;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.TemplateBuildTest.Answer;
import io.sandboxes.local.TemplateBuildTest.Requested;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tags of built templates ({@code name:tag} in builds and creates, E2B's tag calls), a template
 * with its builds and its update, names shared with snapshots, and the images builds leave:
 * over real HTTP against the shared local server, with real Docker builds.
 */
@ExtendWith(SharedServer.class)
class TemplateTagsTest {
  private static DockerRuntime docker;

  @BeforeAll
  static void connect() {
    docker = DockerRuntime.connect();
  }

  @AfterAll
  static void disconnect() throws Exception {
    docker.close();
  }

  private static DockerClient d() {
    return docker.client();
  }

  private static Requested request(LocalServer server, String name, String... tags) throws Exception {
    ObjectNode body = Json.object().put("name", name);
    if (tags.length > 0) {
      var t = body.putArray("tags");
      for (String x : tags) {
        t.add(x);
      }
    }
    Answer a = call(server, "POST", "/v3/templates", body);
    assertThat(a.status()).as("%s", a.body()).isEqualTo(202);
    return new Requested(a.body().path("templateID").asText(), a.body().path("buildID").asText());
  }

  /** Builds {@code reference} from base with one RUN that writes {@code mark} to /mark.txt; @return the build id. */
  private static Requested buildMarked(LocalServer server, String mark, String name, String... tags) throws Exception {
    Requested r = request(server, name, tags);
    ObjectNode body = Json.object().put("fromTemplate", "base");
    body.putArray("steps").add(step("RUN", "echo " + mark + " > /mark.txt", "root"));
    List<JsonNode> log = new ArrayList<>();
    JsonNode done = build(server, r, body, log);
    assertThat(done.path("status").asText()).as("%s", TemplateBuildTest.messages(log)).isEqualTo("ready");
    return r;
  }

  private static String markOf(E2BApi e2b, String reference) {
    try (LiveSandbox s = e2b.create(SandboxSpec.of(reference))) {
      return s.readFile("/mark.txt").trim();
    }
  }

  private static Map<String, String> tags(LocalServer server, String template) throws Exception {
    Answer a = call(server, "GET", "/templates/" + template + "/tags", null);
    assertThat(a.status()).as("%s", a.body()).isEqualTo(200);
    Map<String, String> out = new java.util.TreeMap<>();
    a.body().forEach(t -> {
      assertThat(t.path("createdAt").asText()).isNotEmpty();
      out.put(t.path("tag").asText(), t.path("buildID").asText());
    });
    return out;
  }

  private static List<?> images(String label, String value) {
    return d().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(label, value)).exec();
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(x -> out.add(x.asText()));
    return out;
  }

  private static void assertStatus(Answer a, int status, String messagePart) {
    assertThat(a.status()).as("%s", a.body()).isEqualTo(status);
    assertThat(a.body().path("message").asText()).contains(messagePart);
  }

  @Test
  @DisplayName("tags: name:tag builds, creates from name:tag, assigned and removed through E2B's calls; an untagged build's image goes;"
      + " the template with its builds; its update; a delete leaves no image")
  void tagsBuildsAndUpdate(LocalServer server, E2BApi e2b) throws Exception {
    String name = unique("tpl-tags");
    String mark = UUID.randomUUID().toString(); // no earlier run's cache applies
    Requested first = buildMarked(server, "one-" + mark, name + ":v1", "stable");
    String id = first.templateId();
    try {
      // a sandbox's container takes its image's labels: the build's step-container mark must not pass on (a restart would remove it)
      Map<String, String> labels = d().inspectImageCmd("sandboxes-local/template:" + id + ".v1").exec().getConfig().getLabels();
      assertThat(labels.get("io.sandboxes.template-build-of")).as("%s", labels).isEmpty();
      assertThat(labels.get("io.sandboxes.template-id")).isEqualTo(id);
      assertThat(tags(server, name)).isEqualTo(Map.of("stable", first.buildId(), "v1", first.buildId()));
      assertThat(markOf(e2b, name + ":v1")).isEqualTo("one-" + mark);
      assertThat(markOf(e2b, name + ":stable")).isEqualTo("one-" + mark);
      // a template built with tags only has no default: the bare name is not a build of it, but the name exists
      Assertions.assertThatThrownBy(() -> e2b.create(SandboxSpec.of(name)))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
      assertThat(call(server, "GET", "/templates/aliases/" + name, null).status()).isEqualTo(200);
      assertStatus(call(server, "DELETE", "/templates/tags", Json.object().put("name", name).set("tags", Json.array().add("v1").add("stable"))),
          400, "cannot remove every tag");

      Requested second = buildMarked(server, "two-" + mark, name);
      assertThat(second.templateId()).as("the same name is the same template").isEqualTo(id);
      assertThat(markOf(e2b, name)).isEqualTo("two-" + mark);
      assertThat(markOf(e2b, name + ":default")).isEqualTo("two-" + mark);
      assertThat(markOf(e2b, name + ":v1")).as("a build without tags moves only default").isEqualTo("one-" + mark);
      assertThat(markOf(e2b, name + ":" + first.buildId())).as("a build by its id while a tag points at it").isEqualTo("one-" + mark);
      assertThat(tags(server, id)).isEqualTo(Map.of("default", second.buildId(), "stable", first.buildId(), "v1", first.buildId()));

      Answer assigned = call(server, "POST", "/templates/tags", Json.object().put("target", name + ":v1").set("tags",
          Json.array().add("prod").add("Prod ")));
      assertThat(assigned.status()).as("%s", assigned.body()).isEqualTo(201);
      assertThat(assigned.body().path("buildID").asText()).isEqualTo(first.buildId());
      assertThat(texts(assigned.body().path("tags"))).as("trimmed, lowercased, once").containsExactly("prod");
      assertThat(markOf(e2b, name + ":prod")).isEqualTo("one-" + mark);
      // a bare target is its default tag's build: v1 moves to the second build
      Answer moved = call(server, "POST", "/templates/tags", Json.object().put("target", name).set("tags", Json.array().add("v1")));
      assertThat(moved.body().path("buildID").asText()).as("%s", moved.body()).isEqualTo(second.buildId());
      assertThat(markOf(e2b, name + ":v1")).isEqualTo("two-" + mark);

      Answer info = call(server, "GET", "/templates/" + name, null);
      assertThat(info.status()).as("%s", info.body()).isEqualTo(200);
      assertThat(info.body().path("templateID").asText()).isEqualTo(id);
      assertThat(texts(info.body().path("names"))).containsExactly(name);
      assertThat(info.body().path("public").asBoolean(true)).isFalse();
      assertThat(info.body().path("builds").findValuesAsText("buildID")).as("newest first").containsExactly(second.buildId(),
          first.buildId());
      assertThat(info.body().path("builds").findValuesAsText("status")).containsOnly("ready");
      assertThat(info.body().path("builds").get(0).path("cpuCount").asInt()).isEqualTo(2);
      assertThat(info.body().path("builds").get(0).path("memoryMB").asInt()).isEqualTo(2048);
      Answer page = call(server, "GET", "/templates/" + id + "?limit=1", null);
      assertThat(page.body().path("builds").findValuesAsText("buildID")).containsExactly(second.buildId());

      // the first build loses its last tags while a sandbox of it runs: nothing points at it, so its
      // image goes once that sandbox is killed (the sweep tries again while a sandbox holds it)
      LiveSandbox onFirst = e2b.create(SandboxSpec.of(name + ":prod"));
      Answer removed = call(server, "DELETE", "/templates/tags", Json.object().put("name", name).set("tags",
          Json.array().add("stable").add("prod").add("never-there")));
      assertThat(removed.status()).as("%s", removed.body()).isEqualTo(204);
      assertThat(tags(server, id)).isEqualTo(Map.of("default", second.buildId(), "v1", second.buildId()));
      Assertions.assertThatThrownBy(() -> e2b.create(SandboxSpec.of(name + ":stable")))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
      assertThat(onFirst.readFile("/mark.txt").trim()).as("the sandbox of the untagged build runs on").isEqualTo("one-" + mark);
      assertThat(images("io.sandboxes.template-build", first.buildId())).as("the untagged build's image while a sandbox uses it")
          .isNotEmpty();
      onFirst.kill();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(images("io.sandboxes.template-build", first.buildId()))
          .as("the untagged build's image, its sandbox killed").isEmpty());
      assertThat(call(server, "GET", "/templates/" + id, null).body().path("builds").findValuesAsText("buildID"))
          .containsExactly(second.buildId());

      assertStatus(call(server, "DELETE", "/templates/tags", Json.object().put("name", name).set("tags", Json.array().add("default"))),
          400, "'default'");
      assertStatus(call(server, "DELETE", "/templates/tags", Json.object().put("name", name + ":v1").set("tags", Json.array().add("v1"))),
          400, "should not contain a tag");
      assertStatus(call(server, "DELETE", "/templates/tags", Json.object().put("name", name + "-none").set("tags", Json.array().add("x"))),
          404, "not found");
      assertStatus(call(server, "POST", "/templates/tags", Json.object().put("target", name).set("tags", Json.array().add("Bad Tag!"))),
          400, "invalid tag");
      assertStatus(call(server, "POST", "/templates/tags", Json.object().put("target", name).set("tags", Json.array())), 400, "at least one");
      assertStatus(call(server, "POST", "/templates/tags", Json.object().put("target", name + ":nope").set("tags", Json.array().add("x"))),
          404, "not found");
      assertStatus(call(server, "POST", "/v3/templates", Json.object().put("name", name).set("tags",
          Json.array().add(UUID.randomUUID().toString()))), 400, "UUID");

      // the update takes what the spec has, 'public'; the local runtime has one team, so only false
      for (String path : List.of("/templates/" + id, "/v2/templates/" + name)) {
        Answer ok = call(server, "PATCH", path, Json.object().put("public", false));
        assertThat(ok.status()).as("%s %s", path, ok.body()).isEqualTo(200);
        assertThat(texts(ok.body().path("names"))).containsExactly(name);
        assertStatus(call(server, "PATCH", path, Json.object().put("public", true)), 400, "one team");
        assertStatus(call(server, "PATCH", path, Json.object().put("public", false).put("cpuCount", 4)), 400, "'cpuCount' cannot be updated");
        assertStatus(call(server, "PATCH", path, Json.object()), 400, "'public' must be");
      }
      assertStatus(call(server, "PATCH", "/templates/" + name + "-none", Json.object().put("public", false)), 404, "not found");
    } finally {
      Answer deleted = call(server, "DELETE", "/templates/" + id, null);
      assertThat(deleted.status()).as("%s", deleted.body()).isEqualTo(204);
    }
    assertThat(call(server, "GET", "/templates/" + id, null).status()).isEqualTo(404);
    assertThat(call(server, "GET", "/templates/" + id + "/tags", null).status()).isEqualTo(404);
    // the delete removes every build and the step images its builds made
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
      assertThat(images("io.sandboxes.template-id", id)).as("builds").isEmpty();
      assertThat(images("io.sandboxes.template-step-of", id)).as("step images").isEmpty();
    });
  }

  @Test
  @DisplayName("a name is one template: a snapshot cannot take a built template's name, nor a build a snapshot's (409)")
  void namesSharedWithSnapshots(LocalServer server, E2BApi e2b) throws Exception {
    String built = unique("tpl-clash");
    Requested r = request(server, built);
    assertThat(build(server, r, Json.object().put("fromTemplate", "base"), new ArrayList<>()).path("status").asText()).isEqualTo("ready");
    String snap = unique("snap-clash");
    try (LiveSandbox s = e2b.create(SandboxSpec.of("base"))) {
      Assertions.assertThatThrownBy(() -> e2b.createSnapshot(s.id(), built))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> {
            assertThat(e.statusCode()).isEqualTo(409);
            assertThat(e.getMessage()).contains("taken by a built template");
          });
      assertThat(e2b.createSnapshot(s.id(), snap).snapshotId()).isEqualTo(snap + ":default");
    }
    try {
      assertStatus(call(server, "POST", "/v3/templates", Json.object().put("name", snap)), 409, "taken by a snapshot");
      assertStatus(call(server, "POST", "/v3/templates", Json.object().put("name", snap + ":v2")), 409, "taken by a snapshot");
      // the built template is still what its name resolves to, and the snapshot what its own does
      assertThat(call(server, "GET", "/templates/aliases/" + built, null).body().path("templateID").asText()).isEqualTo(r.templateId());
      assertThat(call(server, "GET", "/templates/aliases/" + snap, null).body().path("templateID").asText()).isEqualTo(snap + ":default");
    } finally {
      assertThat(e2b.deleteTemplate(snap + ":default")).isTrue();
    }
    // a snapshot of a sandbox made from the built template is no build of it: the template's delete leaves it
    String child = unique("snap-of-tpl");
    try {
      try (LiveSandbox s = e2b.create(SandboxSpec.of(built))) {
        s.writeFile("/home/user/kept.txt", "kept");
        e2b.createSnapshot(s.id(), child);
      }
      assertThat(call(server, "DELETE", "/templates/" + built, null).status()).isEqualTo(204);
      await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(30))
          .until(() -> e2b.listSnapshots(null, child).size() == 1);
      try (LiveSandbox s = e2b.create(SandboxSpec.of(child))) {
        assertThat(s.readFile("/home/user/kept.txt")).isEqualTo("kept");
      }
    } finally {
      e2b.deleteTemplate(child + ":default");
    }
  }
}
