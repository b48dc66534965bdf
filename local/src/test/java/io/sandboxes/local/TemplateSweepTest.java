package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildOptions;
import io.sandboxes.template.Template;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What builds leave behind goes, and nothing a build is using goes with it: deleting a template
 * while another with the very same steps builds (the build takes the deleted template's step
 * images from the cache while the delete sweeps them), and a rebuild whose steps changed.
 */
@ExtendWith(SharedServer.class)
class TemplateSweepTest {
  private static final int ROUNDS = 4;

  @Test
  // four rounds of two builds and two sandboxes: 221 s in one loaded CI run, past the default 5 minutes in another
  @org.junit.jupiter.api.Timeout(value = 12, unit = java.util.concurrent.TimeUnit.MINUTES)
  @DisplayName("a template built with the steps of one being deleted at the same moment builds and runs, round after round")
  void buildWhileTheTwinIsDeleted(E2BApi e2b) throws Exception {
    List<String> failures = new ArrayList<>();
    List<String> templateIds = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      String marker = UUID.randomUUID().toString();
      Template steps = Template.fromTemplate("base")
          .runCmd("echo " + marker + " > /tmp/first.txt")
          .runCmd("echo second >> /tmp/first.txt");
      String first = "race-a-" + marker.substring(0, 8);
      String second = "race-b-" + marker.substring(0, 8);
      BuildInfo a = e2b.buildTemplate(steps, first, BuildOptions.defaults());
      templateIds.add(a.templateId());
      try (LiveSandbox s = e2b.create(SandboxSpec.of(first))) {
        assertThat(s.readFile("/tmp/first.txt")).isEqualTo(marker + "\nsecond\n");
      }
      // the delete's sweep runs in rounds in the background; the twin's build starts at once and finds the same steps
      CompletableFuture<Void> delete = CompletableFuture.runAsync(() -> e2b.deleteTemplate(a.templateId()));
      try {
        BuildInfo b = e2b.buildTemplate(steps, second, BuildOptions.defaults());
        templateIds.add(b.templateId());
        try (LiveSandbox s = e2b.create(SandboxSpec.of(second))) {
          assertThat(s.readFile("/tmp/first.txt")).isEqualTo(marker + "\nsecond\n");
        } finally {
          delete.join();
          e2b.deleteTemplate(b.templateId());
        }
      } catch (RuntimeException e) {
        failures.add("round " + round + ": " + e);
        delete.join();
        try {
          e2b.deleteTemplate(second);
        } catch (RuntimeException ignored) {
          // it was not registered
        }
      }
    }
    assertThat(failures).as("builds that failed while their twin was deleted").isEmpty();
    // and nothing stays: both templates' builds and the step images their builds made
    for (String id : templateIds) {
      TemplateBuildTest.awaitNoImages("io.sandboxes.template-id", id);
      TemplateBuildTest.awaitNoImages("io.sandboxes.template-step-of", id);
    }
  }

  @Test
  @DisplayName("a rebuild with other steps leaves only its own step images: the earlier build's go with it")
  void rebuildSweepsTheEarlierSteps(E2BApi e2b) throws Exception {
    String name = "sweep-" + UUID.randomUUID().toString().substring(0, 8);
    BuildInfo first = e2b.buildTemplate(Template.fromTemplate("base").runCmd("echo one " + name + " > /tmp/v"), name,
        BuildOptions.defaults());
    try {
      BuildInfo second = e2b.buildTemplate(Template.fromTemplate("base").runCmd("echo two " + name + " > /tmp/v"), name,
          BuildOptions.defaults());
      assertThat(second.templateId()).isEqualTo(first.templateId());
      try (io.sandboxes.local.internal.docker.DockerRuntime d = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).untilAsserted(() -> assertThat(d.client()
            .listImagesCmd().withShowAll(true).withLabelFilter(java.util.Map.of("io.sandboxes.template-step-of", first.templateId()))
            .exec()).as("the step images of %s: the current build's one RUN", name).hasSize(1));
      }
      try (LiveSandbox s = e2b.create(SandboxSpec.of(name))) {
        assertThat(s.readFile("/tmp/v")).isEqualTo("two " + name + "\n");
      }
    } finally {
      e2b.deleteTemplate(first.templateId());
    }
  }
}
