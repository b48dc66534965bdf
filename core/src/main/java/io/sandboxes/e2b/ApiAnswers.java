package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxLifecycle;
import io.sandboxes.SandboxState;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Reads the control plane's answers into the client's types, for {@link E2BApi} and
 * {@link E2BSandboxProvider}: sandbox records, volumes, snapshots, metrics samples, fork results
 * and template aliases. A record of a shape this client cannot read is a {@link SandboxException}
 * quoting it, never a guess.
 */
final class ApiAnswers {
  private ApiAnswers() {}

  static SandboxInfo info(JsonNode row) {
    try {
      return new SandboxInfo(
          Json.requireText(row, "sandboxID"),
          Json.requireText(row, "templateID"),
          Json.text(row, "alias"),
          state(Json.requireText(row, "state")),
          Json.instant(row, "startedAt"),
          Json.instant(row, "endAt"),
          Json.intValue(row, "cpuCount", 0),
          Json.intValue(row, "memoryMB", 0),
          Json.requireText(row, "envdVersion"),
          Json.stringMap(row.get("metadata")),
          volumeMounts(row.get("volumeMounts")),
          NetworkWire.read(row),
          lifecycle(row.get("lifecycle")),
          domain(row));
    } catch (RuntimeException e) {
      throw new SandboxException("a sandbox record of a shape this client cannot read: " + Json.abbreviate(row), e);
    }
  }

  /** The rows of a listing's page that name a sandbox; E2B's SDKs drop the others too. */
  static List<SandboxInfo> infos(List<JsonNode> rows) {
    List<SandboxInfo> items = new ArrayList<>(rows.size());
    for (JsonNode row : rows) {
      // a row that names no sandbox cannot be acted on
      if (Json.text(row, "sandboxID") != null) {
        items.add(info(row));
      }
    }
    return items;
  }

  /**
   * A sandbox's record, asked of the control plane and read leniently as
   * {@link E2BSandboxProvider#describe} promises (empty when there is no such sandbox): a missing id
   * is the requested one, a missing template, daemon version or unreadable time is null, a missing
   * or unreadable count is 0, missing metadata or mounts are empty, a state other than
   * {@code paused} is running.
   */
  static Optional<SandboxInfo> sparseInfo(ControlPlane controlPlane, String sandboxId) {
    JsonNode info;
    try {
      info = controlPlane.info(sandboxId);
    } catch (io.sandboxes.SandboxNotFoundException e) {
      return Optional.empty();
    }
    return Optional.of(new SandboxInfo(
        Objects.requireNonNullElse(Json.text(info, "sandboxID"), sandboxId),
        Json.text(info, "templateID"),
        Json.text(info, "alias"),
        "paused".equals(Json.text(info, "state")) ? SandboxState.PAUSED : SandboxState.RUNNING,
        Timestamps.instant(Json.text(info, "startedAt")),
        Timestamps.instant(Json.text(info, "endAt")),
        countOrZero(info, "cpuCount"),
        countOrZero(info, "memoryMB"),
        Json.text(info, "envdVersion"),
        Json.stringMap(info.get("metadata")),
        volumeMounts(info.get("volumeMounts")),
        null,
        sparseLifecycle(info.get("lifecycle")),
        domain(info)));
  }

  /**
   * A record's {@code lifecycle} ({@code {"onTimeout": "kill"|"pause", "autoResume": bool}}), or
   * null when there is none; an action other than those two, or a field missing, is a record this
   * client cannot read.
   */
  static @Nullable SandboxLifecycle lifecycle(@Nullable JsonNode lifecycle) {
    if (lifecycle == null || lifecycle.isNull()) {
      return null;
    }
    String onTimeout = Json.requireText(lifecycle, "onTimeout");
    JsonNode autoResume = lifecycle.get("autoResume");
    if (autoResume == null || !autoResume.isBoolean()) {
      throw new IllegalArgumentException("lifecycle.autoResume is not true or false in " + Json.abbreviate(lifecycle));
    }
    return switch (onTimeout) {
      case "pause" -> new SandboxLifecycle(true, autoResume.booleanValue());
      case "kill" -> new SandboxLifecycle(false, autoResume.booleanValue());
      default -> throw new IllegalArgumentException("unknown lifecycle.onTimeout '" + onTimeout + "'");
    };
  }

  /** {@link #lifecycle} for the lenient lookup: an unreadable lifecycle is null, as "not reported". */
  private static @Nullable SandboxLifecycle sparseLifecycle(@Nullable JsonNode lifecycle) {
    try {
      return lifecycle(lifecycle);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** A record's {@code domain}: null when absent or empty (E2B's SDK reads {@code ""} as none too). */
  static @Nullable String domain(JsonNode record) {
    String domain = Json.text(record, "domain");
    return domain == null || domain.isBlank() ? null : domain;
  }

  /** A count of a sparse record: 0 ("not reported") when absent or not an int. */
  private static int countOrZero(JsonNode record, String field) {
    Integer v = Json.exactInt(record.get(field));
    return v == null ? 0 : v;
  }

  /** The control plane's state names; anything else is a record this client cannot read. */
  static SandboxState state(String wire) {
    return switch (wire) {
      case "running" -> SandboxState.RUNNING;
      case "paused" -> SandboxState.PAUSED;
      default -> throw new IllegalArgumentException("unknown sandbox state '" + wire + "'");
    };
  }

  static List<VolumeMount> volumeMounts(@Nullable JsonNode mounts) {
    List<VolumeMount> out = new ArrayList<>();
    if (mounts != null && mounts.isArray()) {
      mounts.forEach(m -> out.add(new VolumeMount(m.path("name").asText(), m.path("path").asText())));
    }
    return out;
  }

  static VolumeInfo volume(JsonNode v) {
    try {
      return new VolumeInfo(Json.requireText(v, "volumeID"), Json.requireText(v, "name"));
    } catch (RuntimeException e) {
      throw new SandboxException("a volume record of a shape this client cannot read: " + Json.abbreviate(v), e);
    }
  }

  static SnapshotInfo snapshot(JsonNode s) {
    try {
      List<String> names = new ArrayList<>();
      s.path("names").forEach(n -> names.add(n.asText()));
      return new SnapshotInfo(Json.requireText(s, "snapshotID"), names);
    } catch (RuntimeException e) {
      throw new SandboxException("a snapshot record of a shape this client cannot read: " + Json.abbreviate(s), e);
    }
  }

  /** A fork answer, entry by entry: a sandbox handed to {@code handle}, or the error that kept it from starting. */
  static List<ForkResult> forks(JsonNode answer, Function<JsonNode, LiveSandbox> handle, String sandboxId) {
    List<ForkResult> out = new ArrayList<>(answer.size());
    for (JsonNode entry : answer) {
      JsonNode sandbox = entry.get("sandbox");
      if (sandbox != null && sandbox.isObject()) {
        out.add(new ForkResult(handle.apply(sandbox), null));
      } else {
        JsonNode error = entry.path("error");
        int status = Json.intValue(error, "code", 500);
        String message = Json.text(error, "message");
        out.add(new ForkResult(null, io.sandboxes.e2b.internal.ApiErrors.of(status,
            message == null ? "the server gave no reason" : message, "fork sandbox " + sandboxId)));
      }
    }
    return out;
  }

  /** Metrics samples, oldest first as the server lists them. */
  static List<SandboxMetrics> metrics(JsonNode answer) {
    List<SandboxMetrics> out = new ArrayList<>(answer.size());
    for (JsonNode m : answer) {
      try {
        Instant at = m.hasNonNull("timestampUnix")
            ? Instant.ofEpochSecond(m.get("timestampUnix").asLong())
            : Json.instant(m, "timestamp");
        out.add(new SandboxMetrics(Objects.requireNonNull(at, "timestamp"), m.path("cpuUsedPct").asDouble(),
            Json.intValue(m, "cpuCount", 0), m.path("memUsed").asLong(), m.path("memTotal").asLong(),
            m.path("memCache").asLong(), m.path("diskUsed").asLong(), m.path("diskTotal").asLong()));
      } catch (RuntimeException e) {
        throw new SandboxException("a metrics sample of a shape this client cannot read: " + Json.abbreviate(m), e);
      }
    }
    return out;
  }

  /** What an alias names: empty on 404, a refusal on 403 (another team's), else the template. */
  static Optional<TemplateAlias> templateAlias(ControlPlane.AliasAnswer a, String alias) {
    if (a.status() == 404) {
      return Optional.empty();
    }
    String context = "look up template alias " + alias;
    if (a.body() == null) {
      throw new io.sandboxes.SandboxApiException(a.status(), "the template exists but is not this team's", context);
    }
    String templateId = Json.text(a.body(), "templateID");
    if (templateId == null) {
      throw new SandboxException(context + ": the answer names no template: " + Json.abbreviate(a.body()));
    }
    return Optional.of(new TemplateAlias(templateId, a.body().path("public").asBoolean(false)));
  }
}
