package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link SandboxProvider} should create: which project the sandbox serves, from which
 * template, with which environment, labels and volume. Immutable; each {@code with...} method
 * returns a validated copy.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=sandbox-config :
 * SandboxConfig config = SandboxConfig.forProject("p1")
 *     .withEnv(Map.of("A", "1"))
 *     .withLabels(Map.of("team", "x"))
 *     .withVolume("mol-project-p1", "/workspace/my-app");
 * }
 *
 * @param projectId the project the sandbox belongs to; stored as the {@code projectId} label
 * @param templateId the template to boot from, or null for the provider's default
 * @param env environment variables of every process in the sandbox
 * @param labels more labels stored with the sandbox
 * @param volumeName a named volume to mount, or null
 * @param volumeMountPath where to mount it; required when {@code volumeName} is set
 * @param timeout the sandbox's lifetime, or null for the provider's default
 * @param command a command the sandbox should run on boot; providers that cannot run one refuse
 * @since 0.1
 */
public record SandboxConfig(
    String projectId,
    @Nullable String templateId,
    Map<String, String> env,
    Map<String, String> labels,
    @Nullable String volumeName,
    @Nullable String volumeMountPath,
    @Nullable Duration timeout,
    @Nullable String command) {

  /** Validates and copies the components. */
  public SandboxConfig {
    Objects.requireNonNull(projectId, "projectId");
    if (projectId.isBlank()) {
      throw new IllegalArgumentException("projectId must not be blank");
    }
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    labels = Map.copyOf(Objects.requireNonNull(labels, "labels"));
    if (templateId != null && templateId.isBlank()) {
      throw new IllegalArgumentException("templateId must not be blank; use null for the provider's default");
    }
    if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
      throw new IllegalArgumentException("timeout must be positive, got " + timeout);
    }
  }

  /**
   * Starts a config for a project; everything else is the provider's default.
   *
   * @param projectId the project the sandbox serves
   * @return a config with nothing else set
   */
  public static SandboxConfig forProject(String projectId) {
    return new SandboxConfig(projectId, null, Map.of(), Map.of(), null, null, null, null);
  }

  /**
   * Returns a copy that boots from this template.
   *
   * @param templateId the template to boot from
   * @return a copy with it
   */
  public SandboxConfig withTemplate(String templateId) {
    return new SandboxConfig(projectId, Objects.requireNonNull(templateId, "templateId"), env, labels, volumeName,
        volumeMountPath, timeout, command);
  }

  /**
   * Returns a copy with this environment, replacing the one set before.
   *
   * @param env environment of every process
   * @return a copy with it
   */
  public SandboxConfig withEnv(Map<String, String> env) {
    return new SandboxConfig(projectId, templateId, env, labels, volumeName, volumeMountPath, timeout, command);
  }

  /**
   * Returns a copy with these labels, replacing the ones set before ({@code projectId} is
   * stored as a label as well).
   *
   * @param labels labels stored with the sandbox
   * @return a copy with them
   */
  public SandboxConfig withLabels(Map<String, String> labels) {
    return new SandboxConfig(projectId, templateId, env, labels, volumeName, volumeMountPath, timeout, command);
  }

  /**
   * Returns a copy that mounts a named volume; a config mounts at most one.
   *
   * @param volumeName the volume to mount
   * @param mountPath where, an absolute path
   * @return a copy that mounts it
   */
  public SandboxConfig withVolume(String volumeName, String mountPath) {
    new VolumeMount(volumeName, mountPath);
    return new SandboxConfig(projectId, templateId, env, labels, volumeName, mountPath, timeout, command);
  }

  /**
   * Returns a copy with this lifetime.
   *
   * @param timeout the sandbox's lifetime, positive
   * @return a copy with it
   */
  public SandboxConfig withTimeout(Duration timeout) {
    return new SandboxConfig(projectId, templateId, env, labels, volumeName, volumeMountPath,
        Objects.requireNonNull(timeout, "timeout"), command);
  }

  /**
   * Returns a copy that runs a command when the sandbox boots.
   *
   * @param command a command to run on boot
   * @return a copy with it
   */
  public SandboxConfig withCommand(String command) {
    return new SandboxConfig(projectId, templateId, env, labels, volumeName, volumeMountPath, timeout,
        Objects.requireNonNull(command, "command"));
  }
}
