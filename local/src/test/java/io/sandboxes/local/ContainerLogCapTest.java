package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Frame;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 21, class 5: what a sandbox writes to its container's own stdout and stderr (PID 1's,
 * which root in the sandbox reaches through {@code /proc/1/fd/1}) grows Docker's host-side log.
 * The log is held to {@link DockerRuntime#SANDBOX_LOG_FILES} files of
 * {@link DockerRuntime#SANDBOX_LOG_FILE_SIZE}: a flood from inside leaves at most that on the host.
 */
@ExtendWith(SharedServer.class)
class ContainerLogCapTest {
  /** Two 1 MiB files, and one message's overshoot (a 16 KiB chunk of NUL bytes is about 100 KB of JSON). */
  private static final long CAP = 2L * 1024 * 1024 + 256 * 1024;
  /** What the sandbox writes: 24 MiB of NUL bytes to stdout and 8 MiB to stderr, about 190 MB of JSON uncapped. */
  private static final String FLOOD = "sudo sh -c 'head -c 24M /dev/zero > /proc/1/fd/1; head -c 8M /dev/zero > /proc/1/fd/2'";

  @Test
  @DisplayName("root in a sandbox floods PID 1's stdout and stderr: the container's host log stays within its cap, and the sandbox works on")
  void floodThroughPidOne(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox sandbox = e2b.create();
    try (DockerRuntime docker = DockerRuntime.connect()) {
      String container = server.registry().find(sandbox.id()).orElseThrow().instanceId();
      InspectContainerResponse before = docker.client().inspectContainerCmd(container).exec();
      assertThat(before.getHostConfig().getLogConfig().getConfig())
          .containsEntry("max-size", DockerRuntime.SANDBOX_LOG_FILE_SIZE).containsEntry("max-file", DockerRuntime.SANDBOX_LOG_FILES);

      ExecResult flood = sandbox.exec(FLOOD);
      assertThat(flood.exitCode()).as(flood.stderr()).isZero();

      // the flood is written by the time head ends (Docker's default log mode blocks the writer until the log takes it)
      long bytes = hostLogBytes(docker, before);
      assertThat(bytes).as("bytes of the container's json-file log on the host").isGreaterThan(0).isLessThanOrEqualTo(CAP);
      assertThat(sandbox.exec("echo alive").stdout()).isEqualTo("alive\n");
    } finally {
      sandbox.kill();
    }
  }

  /**
   * The size of every json-file log of the container (the current one and those rotated), read
   * on the engine's host by a helper container that mounts the log's folder read-only: the test
   * needs no access to Docker's folder itself.
   */
  static long hostLogBytes(DockerRuntime docker, InspectContainerResponse c) throws Exception {
    String logPath = c.getLogPath();
    assertThat(logPath).as("the container's log path").isNotBlank();
    String folder = Path.of(logPath).getParent().toString();
    String id = docker.client().createContainerCmd(c.getImageId())
        .withLabels(Map.of("io.sandboxes.test", "log-cap"))
        .withCmd(List.of("/bin/sh", "-c", "cat /logs/*-json.log* | wc -c"))
        .withNetworkDisabled(true)
        .withHostConfig(com.github.dockerjava.api.model.HostConfig.newHostConfig().withNetworkMode("none")
            .withBinds(new com.github.dockerjava.api.model.Bind(folder, new com.github.dockerjava.api.model.Volume("/logs"),
                com.github.dockerjava.api.model.AccessMode.ro)))
        .exec().getId();
    try {
      docker.client().startContainerCmd(id).exec();
      Integer code = docker.client().waitContainerCmd(id).exec(new com.github.dockerjava.api.command.WaitContainerResultCallback())
          .awaitStatusCode(60, TimeUnit.SECONDS);
      StringBuilder out = new StringBuilder();
      docker.client().logContainerCmd(id).withStdOut(true).withStdErr(true).exec(new ResultCallback.Adapter<Frame>() {
        @Override
        public void onNext(Frame f) {
          out.append(new String(f.getPayload(), StandardCharsets.UTF_8));
        }
      }).awaitCompletion(30, TimeUnit.SECONDS);
      assertThat(code).as("the measuring container: %s", out).isZero();
      return Long.parseLong(out.toString().strip());
    } finally {
      docker.remove(id);
    }
  }
}
