package io.sandboxes.coexist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Image;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container;
import org.testcontainers.containers.GenericContainer;
import org.slf4j.Logger;
import org.testcontainers.utility.DockerImageName;

/**
 * The project's own Testcontainers 1.21 still runs a container, in the same JVM as the sandboxes
 * of {@link CoexistenceChecks}: its docker-java 3.4 and jackson-annotations are the ones it chose.
 * Its SLF4J is 1.7 (Testcontainers' own, declared first), and our log lines reach its backend.
 */
class Testcontainers1Test extends CoexistenceChecks {

  @Test
  void testcontainersStillRunsAContainer() throws Exception {
    assertThat(DockerClientFactory.class.getPackage().getImplementationVersion()).isEqualTo("1.21.4");
    DockerClient docker = DockerClientFactory.instance().client();
    // an image this machine has (Docker Hub is not reachable here): the local runtime's base image
    List<Image> images = docker.listImagesCmd().withReferenceFilter("sandboxes-local/base").exec();
    assertThat(images).as("sandboxes-local/base images (scripts/test.sh builds it before the consumer projects)").isNotEmpty();
    String image = images.get(0).getRepoTags()[0];

    try (GenericContainer<?> box = new GenericContainer<>(DockerImageName.parse(image)).withCommand("sleep", "120")) {
      box.start();
      Container.ExecResult hi = box.execInContainer("sh", "-c", "echo hi from testcontainers");
      assertThat(hi.getExitCode()).as(hi.getStderr()).isZero();
      assertThat(hi.getStdout()).isEqualTo("hi from testcontainers\n");
    }
  }

  @Test
  void ourLogLinesReachTheProjectsSlf4j17Backend() {
    assertThatThrownBy(() -> Logger.class.getMethod("atInfo")).as("SLF4J 1.7 has no fluent API")
        .isInstanceOf(NoSuchMethodException.class);
    PrintStream stderr = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    System.setErr(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try (SandboxClient sandboxes = Sandboxes.local()) {
      assertThat(sandboxes.sandbox().exec("true").exitCode()).isZero();
    } finally {
      System.setErr(stderr);
    }
    // slf4j-simple's line: "[thread] INFO io.sandboxes.local.internal.Registry - event=sandbox.created sandbox=... sandbox created"
    assertThat(printed.toString(StandardCharsets.UTF_8)).containsPattern("INFO io\\.sandboxes\\.local\\.internal\\.Registry - "
        + "event=sandbox\\.created sandbox=\\S+ template=\\S+ .*sandbox created");
  }
}
