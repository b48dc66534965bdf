package io.sandboxes.local.internal.build;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerBuildRuntime;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The step cache and the sweeps share their images: a step image a running build took from the
 * cache stays while that build runs, whichever sweep (a failed build's, a deleted template's)
 * would remove it, and an image being removed is not offered by the cache. Real Docker images.
 */
class ImageSweeperTest {
  private static final String LABEL = "io.sandboxes.test-image-sweeper";
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final Map<String, Build> builds = new ConcurrentHashMap<>();
  private DockerRuntime docker;
  private DockerBuildRuntime runtime;
  private ImageSweeper sweeper;

  @BeforeEach
  void connect() {
    docker = DockerRuntime.connect();
    BaseImage.ensure(docker, line -> {});
    runtime = new DockerBuildRuntime(docker, "bridge");
    sweeper = new ImageSweeper(runtime, "test-" + run, new ReentrantLock(), builds.values());
  }

  @AfterEach
  void cleanUp() {
    for (BuildRuntime.Image i : runtime.images(Map.of(LABEL, run), true)) {
      try {
        docker.client().removeImageCmd(i.id()).withForce(true).exec();
      } catch (RuntimeException ignored) {
        // gone already
      }
    }
    docker.close();
  }

  /** A step image of a template, as a build commits one: labelled with its cache key. */
  private String stepImage(String key) throws Exception {
    String id = runtime.createStep(new BuildRuntime.StepSpec(BaseImage.reference(), Map.of(LABEL, run), List.of(), "root", "/",
        List.of("/bin/true"), 1, 256));
    try {
      runtime.start(id);
      assertThat(runtime.awaitExit(id, Duration.ofSeconds(60))).isZero();
      return runtime.commit(id, Map.of(LABEL, run, BuildLabels.LABEL_CACHE_KEY, key, BuildLabels.LABEL_STEP_OF, "tpl-" + run));
    } finally {
      runtime.removeStep(id);
    }
  }

  private Build build(String name) {
    Build b = new Build(new TemplateService.Requested("tpl-" + name, "build-" + name, name, List.of(), 1, 256, Instant.now()),
        new BuildBudget(64));
    builds.put(name, b);
    return b;
  }

  @Test
  @DisplayName("a cached step a running build goes on from survives a sweep until that build ends; then the sweep removes it")
  void cachedStepOutlivesTheSweepWhileUsed() throws Exception {
    String key = "key-" + run;
    String image = stepImage(key);
    Build running = build("running-" + run);
    String hit = sweeper.takeFromCache(running, () -> runtime.images(Map.of(BuildLabels.LABEL_CACHE_KEY, key), true));
    assertThat(hit).isEqualTo(image);

    sweeper.removeUnused(List.of(image), null); // the deleted template's sweep, as removeImagesOf makes it
    assertThat(runtime.inspect(image)).as("the image the running build took from the cache").isPresent();

    running.finishedAt = Instant.now();
    sweeper.removeUnused(List.of(image), null);
    assertThat(runtime.inspect(image)).as("once that build ended").isEmpty();
  }

  @Test
  @DisplayName("a failed build's sweep leaves what another running build uses, and removes what only it used")
  void failedBuildLeavesWhatOthersUse() throws Exception {
    String shared = stepImage("shared-" + run);
    String own = stepImage("own-" + run);
    Build failed = build("failed-" + run);
    Build other = build("other-" + run);
    sweeper.takeFromCache(failed, () -> runtime.images(Map.of(BuildLabels.LABEL_CACHE_KEY, "shared-" + run), true));
    sweeper.takeFromCache(other, () -> runtime.images(Map.of(BuildLabels.LABEL_CACHE_KEY, "shared-" + run), true));
    sweeper.removeUnused(List.of(own, shared), failed);
    assertThat(runtime.inspect(shared)).isPresent();
    assertThat(runtime.inspect(own)).isEmpty();
  }
}
