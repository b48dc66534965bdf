package io.sandboxes.local.internal.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import io.sandboxes.local.internal.runtime.CapturedImage;
import io.sandboxes.local.internal.runtime.InstanceState;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The sandbox engine on Docker: a sandbox's instance is a container, a captured image a committed one. */
public final class DockerSandboxEngine implements SandboxEngine {
  private final DockerRuntime docker;

  /** @param docker the engine the sandboxes run on */
  public DockerSandboxEngine(DockerRuntime docker) {
    this.docker = docker;
  }

  @Override
  public void freeze(String instanceId) {
    docker.pause(instanceId);
  }

  @Override
  public void thaw(String instanceId) {
    docker.unpause(instanceId);
  }

  @Override
  public void stop(String instanceId, Duration grace) {
    docker.client().stopContainerCmd(instanceId).withTimeout((int) grace.toSeconds()).exec();
  }

  @Override
  public void restart(String instanceId) {
    DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(instanceId).exec());
  }

  @Override
  public boolean remove(String instanceId) {
    return docker.remove(instanceId);
  }

  @Override
  public InstanceState state(String instanceId) {
    InspectContainerResponse.ContainerState s;
    try {
      s = docker.client().inspectContainerCmd(instanceId).exec().getState();
    } catch (NotFoundException e) {
      return InstanceState.GONE;
    }
    return new InstanceState(false, Boolean.TRUE.equals(s.getRunning()), Boolean.TRUE.equals(s.getPaused()),
        "removing".equals(s.getStatus()), Boolean.TRUE.equals(s.getOOMKilled()), s.getExitCodeLong(), String.valueOf(s.getStatus()));
  }

  @Override
  public List<String> environment(String instanceId) {
    String[] raw = docker.client().inspectContainerCmd(instanceId).exec().getConfig().getEnv();
    return raw == null ? List.of() : List.of(raw);
  }

  @Override
  public String imageOf(String instanceId) {
    return docker.client().inspectContainerCmd(instanceId).exec().getImageId();
  }

  @Override
  public Map<String, String> imageLabels(String imageId) {
    var config = docker.client().inspectImageCmd(imageId).exec().getConfig();
    return config == null || config.getLabels() == null ? Map.of() : config.getLabels();
  }

  @Override
  public void rename(String instanceId, String name) {
    docker.client().renameContainerCmd(instanceId).withName(name).exec();
  }

  @Override
  public String capture(String instanceId, String repository, String tag, Map<String, String> labels) {
    return docker.client().commitCmd(instanceId).withRepository(repository).withTag(tag).withLabels(labels).withPause(true).exec();
  }

  @Override
  public ImageRemoval removeImage(String imageId) {
    try {
      docker.client().removeImageCmd(imageId).withForce(false).exec();
      return ImageRemoval.REMOVED;
    } catch (ConflictException e) {
      return ImageRemoval.IN_USE;
    } catch (NotFoundException e) {
      return ImageRemoval.GONE;
    }
  }

  @Override
  public List<CapturedImage> images(Map<String, String> labels) {
    return docker.client().listImagesCmd().withLabelFilter(labels).exec().stream()
        .map(i -> new CapturedImage(i.getId(), i.getLabels() == null ? Map.of() : i.getLabels()))
        .toList();
  }
}
