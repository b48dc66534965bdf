package io.sandboxes.e2b;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the control plane says about a sandbox, read without connecting to it.
 *
 * @param sandboxId the sandbox id
 * @param templateId the template it was created from
 * @param alias the template alias, when the server reports one
 * @param state running or paused
 * @param startedAt when it started
 * @param endAt when its timeout expires
 * @param cpuCount virtual CPUs
 * @param memoryMB memory in MiB
 * @param envdVersion version of the in-sandbox daemon
 * @param metadata the labels it was created with
 * @param volumeMounts the volumes mounted into it
 * @since 0.1
 */
public record SandboxInfo(
    String sandboxId,
    String templateId,
    @Nullable String alias,
    SandboxState state,
    Instant startedAt,
    Instant endAt,
    int cpuCount,
    int memoryMB,
    String envdVersion,
    Map<String, String> metadata,
    java.util.List<io.sandboxes.VolumeMount> volumeMounts) {

  /** Validates and copies the components. */
  public SandboxInfo {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(templateId, "templateId");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(startedAt, "startedAt");
    Objects.requireNonNull(endAt, "endAt");
    Objects.requireNonNull(envdVersion, "envdVersion");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    volumeMounts = java.util.List.copyOf(Objects.requireNonNull(volumeMounts, "volumeMounts"));
  }
}
