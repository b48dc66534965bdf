package io.sandboxes.examples.bench;

import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.ByteArrayInputStream;
import java.util.List;

/**
 * The raw baselines the benchmarks compare against: plain {@code docker exec}s through the Docker
 * Engine API into one container, each checked so a broken baseline cannot pass for a fast one.
 */
record RawDocker(DockerRuntime docker, String containerId) {

  /** The label every baseline container carries besides the runtime's own; its value names the JVM that made it. */
  static final String LABEL_BASELINE = "io.sandboxes.bench-baseline";

  /** This JVM's value of {@link #LABEL_BASELINE}. */
  static final String RUN = java.util.UUID.randomUUID().toString().substring(0, 8);

  /** A container like a sandbox's (same image, limits, no network), labelled so cleanup finds it. */
  static DockerRuntime.ContainerSpec spec() {
    String name = "sandboxes-raw-baseline-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    return new DockerRuntime.ContainerSpec(BaseImage.reference(), name,
        java.util.Map.of(DockerRuntime.LABEL_OURS, "true", LABEL_BASELINE, RUN), List.of(), name, 2, 1L << 30, 1024,
        java.util.Map.of(), null);
  }

  /** {@code bash -l -c 'echo hi'}, as a sandbox's commands run. */
  Measure.Op echo() {
    List<String> bashEcho = List.of("/bin/bash", "-l", "-c", "echo hi");
    return () -> Measure.check("hi\n".equals(docker.run(containerId, "root", bashEcho, null).stdoutText()), "raw echo");
  }

  /** {@code sh -c 'cat > /tmp/raw.bin'} fed {@code content}. */
  Measure.Op write(byte[] content) {
    return () -> Measure.check(docker.run(containerId, "root", List.of("sh", "-c", "cat > /tmp/raw.bin"),
        new ByteArrayInputStream(content)).exitCode() == 0, "raw write");
  }

  /** {@code cat /tmp/raw.bin}, which {@link #write} left {@code size} bytes long. */
  Measure.Op read(int size) {
    return () -> Measure.check(docker.run(containerId, "root", List.of("cat", "/tmp/raw.bin"), null).stdout().length == size,
        "raw read");
  }

  /** {@code head -c <bytes> /dev/zero}: that many bytes of stdout. */
  Measure.Op stdout(long bytes) {
    List<String> head = List.of("head", "-c", Long.toString(bytes), "/dev/zero");
    return () -> Measure.check(docker.run(containerId, "root", head, null).stdout().length == bytes, "raw stdout");
  }
}
