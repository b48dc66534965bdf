package io.sandboxes;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a provider knows of a sandbox, read without connecting to it (so a paused sandbox stays
 * paused). One record for a single lookup ({@link Describing#describe}) and for listings.
 *
 * <p>Fields a server did not report are null (or 0 for the sizes): a lookup of a single record
 * tolerates a sparse answer, while a listing row missing its id, template, state or daemon version
 * is refused as unreadable rather than shown half-empty.
 *
 * @param id the sandbox id
 * @param templateId the template it was created from, or null when the server did not say
 * @param alias the template's alias, when the server reports one
 * @param state running or paused
 * @param startedAt when it started, or null when not reported or unreadable
 * @param endAt when its timeout expires, or null when not reported
 * @param cpuCount virtual CPUs, 0 when not reported
 * @param memoryMB memory in MiB, 0 when not reported
 * @param envdVersion the version of the sandbox's daemon, or null when not reported
 * @param metadata the metadata it was created with ({@code projectId} included)
 * @param volumeMounts the volumes mounted into it, in mount order
 * @param network its network as the server reports it (with {@code allowInternetAccess}), or null
 *     when the server reports none (a listing row does not); a rule's header values are kept but
 *     never printed, and no proxy password is ever read
 * @param lifecycle what it does at its timeout, as the server reports it, or null when the server
 *     reports nothing (a listing row does not)
 * @param sandboxDomain the domain the server says the sandbox is reached under (E2B's
 *     {@code domain}), or null when it names none (the local server does not)
 * @since 0.1
 */
public record SandboxInfo(
    String id,
    @Nullable String templateId,
    @Nullable String alias,
    SandboxState state,
    @Nullable Instant startedAt,
    @Nullable Instant endAt,
    int cpuCount,
    int memoryMB,
    @Nullable String envdVersion,
    Map<String, String> metadata,
    List<VolumeMount> volumeMounts,
    @Nullable SandboxNetwork network,
    @Nullable SandboxLifecycle lifecycle,
    @Nullable String sandboxDomain) {

  /** Validates and copies the components. */
  public SandboxInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    volumeMounts = List.copyOf(Objects.requireNonNull(volumeMounts, "volumeMounts"));
  }

  /**
   * A record without the lifecycle and domain.
   *
   * @param id the sandbox id
   * @param templateId the template it was created from, or null
   * @param alias the template's alias, or null
   * @param state running or paused
   * @param startedAt when it started, or null
   * @param endAt when its timeout expires, or null
   * @param cpuCount virtual CPUs, 0 when not reported
   * @param memoryMB memory in MiB, 0 when not reported
   * @param envdVersion the version of the sandbox's daemon, or null
   * @param metadata the metadata it was created with
   * @param volumeMounts the volumes mounted into it
   * @param network its network as the server reports it, or null
   */
  public SandboxInfo(String id, @Nullable String templateId, @Nullable String alias, SandboxState state,
      @Nullable Instant startedAt, @Nullable Instant endAt, int cpuCount, int memoryMB, @Nullable String envdVersion,
      Map<String, String> metadata, List<VolumeMount> volumeMounts, @Nullable SandboxNetwork network) {
    this(id, templateId, alias, state, startedAt, endAt, cpuCount, memoryMB, envdVersion, metadata, volumeMounts, network,
        null, null);
  }

  /**
   * A record without the network (as a listing row has it).
   *
   * @param id the sandbox id
   * @param templateId the template it was created from, or null
   * @param alias the template's alias, or null
   * @param state running or paused
   * @param startedAt when it started, or null
   * @param endAt when its timeout expires, or null
   * @param cpuCount virtual CPUs, 0 when not reported
   * @param memoryMB memory in MiB, 0 when not reported
   * @param envdVersion the version of the sandbox's daemon, or null
   * @param metadata the metadata it was created with
   * @param volumeMounts the volumes mounted into it
   */
  public SandboxInfo(String id, @Nullable String templateId, @Nullable String alias, SandboxState state,
      @Nullable Instant startedAt, @Nullable Instant endAt, int cpuCount, int memoryMB, @Nullable String envdVersion,
      Map<String, String> metadata, List<VolumeMount> volumeMounts) {
    this(id, templateId, alias, state, startedAt, endAt, cpuCount, memoryMB, envdVersion, metadata, volumeMounts, null,
        null, null);
  }

  /**
   * The {@code projectId} metadata entry, which {@link SandboxConfig#forProject} sets.
   *
   * @return its value, or null when there is none
   */
  public @Nullable String projectId() {
    return metadata.get("projectId");
  }

  /**
   * The first mounted volume.
   *
   * @return its name, or null when nothing is mounted
   */
  public @Nullable String volumeName() {
    return volumeMounts.isEmpty() ? null : volumeMounts.get(0).volume();
  }
}
