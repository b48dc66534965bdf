package io.sandboxes;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a provider knows of a sandbox without connecting to it.
 *
 * @param id the sandbox id
 * @param projectId the {@code projectId} label, when there is one
 * @param status running or sleeping
 * @param labels every label, {@code projectId} included
 * @param templateRef the template it was booted from, when known
 * @param startedAt when it started: UTC ISO-8601 with exactly three fractional digits, or null when unknown
 * @param createdAt when it was created (the same as {@code startedAt} on E2B), or null
 * @param volumeName the first mounted volume, or null
 * @param ports published ports (none on E2B)
 * @since 0.1
 */
public record SandboxDescriptor(
    String id,
    @Nullable String projectId,
    SandboxStatus status,
    Map<String, String> labels,
    @Nullable String templateRef,
    @Nullable String startedAt,
    @Nullable String createdAt,
    @Nullable String volumeName,
    List<Integer> ports) {

  /** Validates and copies the components. */
  public SandboxDescriptor {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(status, "status");
    labels = Map.copyOf(Objects.requireNonNull(labels, "labels"));
    ports = List.copyOf(Objects.requireNonNull(ports, "ports"));
  }
}
