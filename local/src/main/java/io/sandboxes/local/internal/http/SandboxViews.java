package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.NetworkPolicy;
import io.sandboxes.local.internal.Registry;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How the control plane shows a sandbox, as E2B's API does: what a create, connect or resume
 * answers ({@link Created}), a listing's row ({@link Listed}) and a get's detail ({@link Detail}).
 * Values shown as JSON {@code null} (not left out) are marked so.
 */
final class SandboxViews {
  private static final String CLIENT_ID = "local";

  private SandboxViews() {}

  /** E2B's {@code Sandbox}: what a create, connect or resume answers. */
  record Created(String templateID, String sandboxID, String clientID, String alias, String envdVersion, String envdAccessToken,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String trafficAccessToken,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String domain) {}

  /** One mounted volume, by its name. */
  record Mount(String name, String path) {}

  /** E2B's {@code ListedSandbox}. */
  record Listed(String templateID, String sandboxID, String clientID, String alias, String startedAt, String endAt, int cpuCount,
      int memoryMB, int diskSizeMB, String state, String envdVersion, Map<String, String> metadata, List<Mount> volumeMounts) {}

  /** What a sandbox does at its timeout, and whether traffic wakes it. */
  record Lifecycle(boolean autoResume, String onTimeout) {}

  /** E2B's {@code SandboxDetail}: the listed row and its access token, network and lifecycle. */
  record Detail(String templateID, String sandboxID, String clientID, String alias, String startedAt, String endAt, int cpuCount,
      int memoryMB, int diskSizeMB, String state, String envdVersion, Map<String, String> metadata, List<Mount> volumeMounts,
      String envdAccessToken, @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String domain,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable Boolean allowInternetAccess, @Nullable NetworkPolicy network,
      Lifecycle lifecycle) {}

  static Created created(LocalSandbox s) {
    return new Created(s.reportedTemplateId(), s.id(), CLIENT_ID, s.templateId(), Registry.ENVD_VERSION, s.envdToken(),
        s.trafficAccessToken(), null);
  }

  static Listed listed(LocalSandbox s) {
    return new Listed(s.reportedTemplateId(), s.id(), CLIENT_ID, s.templateId(), s.startedAt().toString(), s.endAt().toString(), s.cpuCount(),
        s.memoryMB(), s.diskSizeMB(), state(s), Registry.ENVD_VERSION, s.metadata(), mounts(s));
  }

  static Detail detail(LocalSandbox s) {
    return new Detail(s.reportedTemplateId(), s.id(), CLIENT_ID, s.templateId(), s.startedAt().toString(), s.endAt().toString(), s.cpuCount(),
        s.memoryMB(), s.diskSizeMB(), state(s), Registry.ENVD_VERSION, s.metadata(), mounts(s), s.envdToken(), null,
        s.allowInternetAccess(), s.network(),
        new Lifecycle(s.lifecycle().autoResume(), s.lifecycle().pauseOnTimeout() ? "pause" : "kill"));
  }

  private static String state(LocalSandbox s) {
    return s.paused() ? "paused" : "running";
  }

  private static List<Mount> mounts(LocalSandbox s) {
    return s.volumeMounts().stream().map(m -> new Mount(m.name(), m.path())).toList();
  }
}
