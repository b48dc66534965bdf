package io.sandboxes.local.internal.docker;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.LogConfig;
import com.github.dockerjava.api.model.StreamType;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import io.sandboxes.local.internal.runtime.InUse;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Template builds on Docker: a step is a container (created from its image, confined as a
 * sandbox's is, on the builds' network and the sandboxes' OCI runtime, logging nothing on the
 * host), committed with {@code docker commit}; images are Docker's.
 */
public final class DockerBuildRuntime implements BuildRuntime {
  private final DockerRuntime docker;
  private final String network;

  /**
   * @param network the Docker network build steps run on: the builds' own, behind the host
   *     firewall, when egress is enforced; Docker's default bridge otherwise
   */
  public DockerBuildRuntime(DockerRuntime docker, String network) {
    this.docker = docker;
    this.network = network;
  }

  @Override
  public List<Image> images(Map<String, String> labels, boolean all) {
    var list = docker.client().listImagesCmd();
    if (all) {
      list = list.withShowAll(true);
    }
    return list.withLabelFilter(labels).exec().stream()
        .map(i -> new Image(i.getId(), i.getCreated() == null ? 0 : i.getCreated(), i.getLabels() == null ? Map.of() : i.getLabels(),
            i.getRepoTags() == null ? List.of() : Arrays.asList(i.getRepoTags())))
        .toList();
  }

  @Override
  public Optional<ImageConfig> inspect(String reference) {
    InspectImageResponse img;
    try {
      img = docker.client().inspectImageCmd(reference).exec();
    } catch (NotFoundException e) {
      return Optional.empty();
    }
    var cfg = img.getConfig();
    return Optional.of(new ImageConfig(img.getId(), cfg == null ? null : cfg.getUser(), cfg == null ? null : cfg.getWorkingDir(),
        cfg == null || cfg.getEnv() == null ? List.of() : Arrays.asList(cfg.getEnv())));
  }

  @Override
  public String imageId(String reference) {
    return docker.client().inspectImageCmd(reference).exec().getId();
  }

  @Override
  public boolean imageExists(String reference) {
    return docker.imageExists(reference);
  }

  @Override
  public void tag(String imageId, String repository, String tag) {
    docker.client().tagImageCmd(imageId, repository, tag).withForce(true).exec();
  }

  @Override
  public boolean removeImage(String reference) {
    // never its untagged parents: a parent can be the step image a running build took from the cache, which Docker does not
    // know; the sweeper removes step images itself, each when no running build uses it
    return docker.removeImage(reference, false, false);
  }

  @Override
  public String ensureDebian(String suite, Consumer<String> progress) {
    return BaseImage.ensureDebian(docker, suite, progress);
  }

  @Override
  public List<String> steps(Map<String, String> labels) {
    return docker.client().listContainersCmd().withShowAll(true).withLabelFilter(labels).exec().stream().map(Container::getId).toList();
  }

  @Override
  public String createStep(StepSpec spec) {
    HostConfig host = DockerRuntime.confined(HostConfig.newHostConfig())
        .withNetworkMode(network)
        .withNanoCPUs(spec.cpuCount() * 1_000_000_000L)
        .withMemory(spec.memoryMB() * 1024L * 1024L)
        .withPidsLimit(4096L)
        .withInit(true)
        .withRuntime(docker.runtime()) // a RUN step is as hostile as a sandbox: same runtime (gVisor when chosen)
        // what a step prints is read through an attach, never from a log on the host's disk
        .withLogConfig(new LogConfig(LogConfig.LoggingType.NONE));
    try (CreateContainerCmd c = docker.client().createContainerCmd(spec.image())) {
      return c.withLabels(spec.labels()).withEnv(spec.env()).withUser(spec.user()).withWorkingDir(spec.workdir()).withCmd(spec.command())
          .withEntrypoint(List.of()).withHostConfig(host).exec().getId();
    }
  }

  @Override
  public void putArchive(String stepId, Path tar) throws IOException {
    try (InputStream in = Files.newInputStream(tar)) {
      docker.client().copyArchiveToContainerCmd(stepId).withRemotePath("/").withTarInputStream(in).exec();
    }
  }

  @Override
  public Attachment attach(String stepId, Output output) {
    CountDownLatch attached = new CountDownLatch(1);
    ResultCallback.Adapter<Frame> callback;
    try {
      callback = docker.client().attachContainerCmd(stepId).withFollowStream(true).withStdOut(true).withStdErr(true)
          .exec(new ResultCallback.Adapter<Frame>() {
            @Override
            public void onStart(Closeable stream) {
              super.onStart(stream);
              attached.countDown();
            }

            @Override
            public void onNext(Frame f) {
              output.chunk(f.getPayload(), f.getStreamType() == StreamType.STDERR);
            }

            @Override
            public void onError(Throwable t) {
              attached.countDown();
              super.onError(t);
            }

            @Override
            public void onComplete() {
              attached.countDown();
              output.end();
              super.onComplete();
            }
          });
    } catch (DockerClientException e) {
      throw new Unfinished(e.getMessage(), e);
    }
    ResultCallback.Adapter<Frame> reading = callback;
    return new Attachment() {
      @Override
      public boolean awaitAttached(Duration limit) throws InterruptedException {
        return attached.await(limit.toSeconds(), TimeUnit.SECONDS);
      }

      @Override
      public void awaitEnd(Duration limit) throws InterruptedException {
        try {
          reading.awaitCompletion(limit.toSeconds(), TimeUnit.SECONDS);
        } catch (DockerClientException e) {
          throw new Unfinished(e.getMessage(), e);
        }
      }

      @Override
      public void close() throws IOException {
        reading.close();
      }
    };
  }

  @Override
  public void start(String stepId) {
    try {
      DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(stepId).exec());
    } catch (DockerClientException e) {
      throw new Unfinished(e.getMessage(), e);
    }
  }

  @Override
  public @Nullable Integer awaitExit(String stepId, Duration limit) {
    try {
      return docker.client().waitContainerCmd(stepId).exec(new WaitContainerResultCallback()).awaitStatusCode(limit.toSeconds(),
          TimeUnit.SECONDS);
    } catch (DockerClientException e) {
      throw new Unfinished(e.getMessage(), e);
    }
  }

  @Override
  public String commit(String stepId, Map<String, String> labels) {
    try {
      return docker.client().commitCmd(stepId).withLabels(labels).exec();
    } catch (DockerClientException e) {
      throw new Unfinished(e.getMessage(), e);
    }
  }

  @Override
  public String commit(String stepId, Map<String, String> labels, String repository, String tag) {
    return docker.client().commitCmd(stepId).withRepository(repository).withTag(tag).withLabels(labels).exec();
  }

  @Override
  public void removeStep(String stepId) {
    docker.remove(stepId);
  }
}
