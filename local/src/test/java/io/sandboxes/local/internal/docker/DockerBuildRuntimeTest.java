package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.local.internal.build.BuildLabels;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import io.sandboxes.local.internal.runtime.InUse;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The build side's runtime seam on the real Docker: a step runs, its output comes back by stream,
 * its exit code is told, it is committed to a labelled image; an image in use is refused with
 * {@link InUse}, one that is not there answers false.
 */
class DockerBuildRuntimeTest {
  private static final String LABEL = "io.sandboxes.test-build-runtime";
  private static final String REPOSITORY = "sandboxes-local/build-runtime-test";
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final List<String> steps = new ArrayList<>();
  private DockerRuntime docker;
  private DockerBuildRuntime runtime;

  @BeforeEach
  void connect() {
    docker = DockerRuntime.connect();
    BaseImage.ensure(docker, line -> {});
    runtime = new DockerBuildRuntime(docker, "bridge");
  }

  @AfterEach
  void cleanUp() {
    steps.forEach(runtime::removeStep);
    for (BuildRuntime.Image i : runtime.images(Map.of(LABEL, run), true)) {
      try {
        docker.client().removeImageCmd(i.id()).withForce(true).exec();
      } catch (RuntimeException ignored) {
        // gone already
      }
    }
    docker.close();
  }

  private String step(String image, List<String> command) {
    String id = runtime.createStep(new BuildRuntime.StepSpec(image, Map.of(LABEL, run), List.of("GREETING=hello"), "root", "/",
        command, 1, 256));
    steps.add(id);
    return id;
  }

  @Test
  @DisplayName("a step's stdout and stderr come back apart, its exit code is told, and its commit is an image found by its labels")
  void stepRunsAndCommits() throws Exception {
    String id = step(BaseImage.reference(), List.of("/bin/sh", "-c", "echo \"$GREETING out\"; echo err >&2; touch /made; exit 3"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    boolean[] ended = new boolean[1];
    try (BuildRuntime.Attachment a = runtime.attach(id, new BuildRuntime.Output() {
      @Override
      public synchronized void chunk(byte[] bytes, boolean stderr) {
        (stderr ? err : out).writeBytes(bytes);
      }

      @Override
      public synchronized void end() {
        ended[0] = true;
      }
    })) {
      assertThat(a.awaitAttached(Duration.ofSeconds(30))).isTrue();
      runtime.start(id);
      assertThat(runtime.awaitExit(id, Duration.ofSeconds(60))).isEqualTo(3);
      a.awaitEnd(Duration.ofSeconds(10));
    }
    assertThat(out.toString()).isEqualTo("hello out\n");
    assertThat(err.toString()).isEqualTo("err\n");
    assertThat(ended[0]).isTrue();

    String image = runtime.commit(id, Map.of(LABEL, run, "io.sandboxes.test-key", "k-" + run));
    assertThat(runtime.images(Map.of("io.sandboxes.test-key", "k-" + run), true)).extracting(BuildRuntime.Image::id).containsExactly(image);
    assertThat(runtime.inspect(image)).hasValueSatisfying(c -> assertThat(c.id()).isEqualTo(image));
    String check = step(image, List.of("/bin/sh", "-c", "test -e /made"));
    runtime.start(check);
    assertThat(runtime.awaitExit(check, Duration.ofSeconds(60))).isZero();
  }

  @Test
  @DisplayName("removing an image a step uses is refused as InUse; once the step is gone it is removed; then it is not there")
  void imageInUseIsRefused() {
    String id = step(BaseImage.reference(), List.of("true"));
    String image = runtime.commit(id, Map.of(LABEL, run), REPOSITORY, run);
    assertThat(runtime.images(Map.of(LABEL, run), true)).singleElement()
        .satisfies(i -> assertThat(i.tags()).containsExactly(REPOSITORY + ":" + run));
    runtime.tag(image, REPOSITORY, run + "-second");
    assertThat(runtime.removeImage(REPOSITORY + ":" + run + "-second")).isTrue();
    String user = step(REPOSITORY + ":" + run, List.of("true"));
    assertThatThrownBy(() -> runtime.removeImage(image)).isInstanceOf(InUse.class);
    runtime.removeStep(user);
    assertThat(runtime.removeImage(REPOSITORY + ":" + run)).isTrue();
    assertThat(runtime.removeImage(REPOSITORY + ":" + run)).isFalse();
    assertThat(runtime.inspect(REPOSITORY + ":" + run)).isEmpty();
  }

  @Test
  @DisplayName("the build side marks its images with the key the sandbox side marks everything of the local runtime with")
  void oursIsOneLabel() {
    assertThat(BuildLabels.LABEL_OURS).isEqualTo(DockerRuntime.LABEL_OURS);
  }
}
