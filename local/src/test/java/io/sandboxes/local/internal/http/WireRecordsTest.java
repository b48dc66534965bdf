package io.sandboxes.local.internal.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.internal.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The answers written from records read as E2B's API writes them: fields in E2B's names, the
 * values E2B shows as {@code null} present as null, the absent ones left out.
 */
class WireRecordsTest {

  private static String json(Object record) {
    return Json.string(Json.MAPPER.valueToTree(record));
  }

  @Test
  @DisplayName("a created sandbox shows trafficAccessToken and domain as null, not absent")
  void createdNulls() {
    String out = json(new SandboxViews.Created("base", "i1", "local", "base", "0.5.4", "tok", null, null));
    assertThat(out).isEqualTo("{\"templateID\":\"base\",\"sandboxID\":\"i1\",\"clientID\":\"local\",\"alias\":\"base\","
        + "\"envdVersion\":\"0.5.4\",\"envdAccessToken\":\"tok\",\"trafficAccessToken\":null,\"domain\":null}");
  }

  @Test
  @DisplayName("'public' keeps its name; an alias lookup and a listed template read as before")
  void publicName() {
    assertThat(json(new SnapshotsApi.Alias("base", true))).isEqualTo("{\"templateID\":\"base\",\"public\":true}");
    String listed = json(new TemplateApi.Listed("t", "b", 2, 2048, 0, false, "c", "u", 0, 1, "0.5.4", "ready", null, null,
        List.of("n"), List.of("n")));
    assertThat(listed).isEqualTo("{\"templateID\":\"t\",\"buildID\":\"b\",\"cpuCount\":2,\"memoryMB\":2048,\"diskSizeMB\":0,"
        + "\"public\":false,\"createdAt\":\"c\",\"updatedAt\":\"u\",\"spawnCount\":0,\"buildCount\":1,\"envdVersion\":\"0.5.4\","
        + "\"buildStatus\":\"ready\",\"createdBy\":null,\"lastSpawnedAt\":null,\"aliases\":[\"n\"],\"names\":[\"n\"]}");
  }

  @Test
  @DisplayName("absent values are left out: a file link that is present, a fork's outcome, a build not finished")
  void absentLeftOut() {
    assertThat(json(new TemplateApi.FileLink(true, null))).isEqualTo("{\"present\":true}");
    assertThat(json(new SandboxesApi.ForkEntry(null, new SandboxesApi.ForkError(404, "gone"))))
        .isEqualTo("{\"error\":{\"code\":404,\"message\":\"gone\"}}");
    assertThat(json(new TemplateApi.Build("b", "building", "c", "u", 2, 2048, "0.5.4", null)))
        .isEqualTo("{\"buildID\":\"b\",\"status\":\"building\",\"createdAt\":\"c\",\"updatedAt\":\"u\",\"cpuCount\":2,"
            + "\"memoryMB\":2048,\"envdVersion\":\"0.5.4\"}");
    assertThat(json(new MetricsApi.LogEntry("t", "info", "m", Map.of()))).isEqualTo(
        "{\"timestamp\":\"t\",\"level\":\"info\",\"message\":\"m\",\"fields\":{}}");
  }

  @Test
  @DisplayName("a build's status: a log line without a step leaves it out, a failed step's line shows it as null")
  void buildStatus() {
    TemplateApi.BuildStatus status = new TemplateApi.BuildStatus("t", "b", "error", List.of("m"),
        List.of(new TemplateApi.LogEntry("ts", "info", "m", null)),
        new TemplateApi.Reason("failed", null, List.of(new TemplateApi.ReasonEntry("ts", "error", "x", null))));
    assertThat(json(status)).isEqualTo("{\"templateID\":\"t\",\"buildID\":\"b\",\"status\":\"error\",\"logs\":[\"m\"],"
        + "\"logEntries\":[{\"timestamp\":\"ts\",\"level\":\"info\",\"message\":\"m\"}],"
        + "\"reason\":{\"message\":\"failed\",\"logEntries\":[{\"timestamp\":\"ts\",\"level\":\"error\",\"message\":\"x\",\"step\":null}]}}");
  }

  @Test
  @DisplayName("maps are written as objects in their own order, a value as its text: a process's envs, a sandbox's metadata")
  void mapsInOrder() {
    Map<String, String> envs = new java.util.LinkedHashMap<>();
    envs.put("B", "1");
    envs.put("A", "");
    assertThat(json(new ProcessRpcs.Config("sh", List.of("-c", "x"), envs, null)))
        .isEqualTo("{\"cmd\":\"sh\",\"args\":[\"-c\",\"x\"],\"envs\":{\"B\":\"1\",\"A\":\"\"}}");
    assertThat(json(new SandboxViews.Listed("base", "i1", "local", "base", "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z", 2, 1024, 0,
        "running", "0.5.4", envs, List.of()))).contains("\"metadata\":{\"B\":\"1\",\"A\":\"\"}");
  }

  @Test
  @DisplayName("envd's stream messages: empty parts as {}, an end's exit code and exited left out at their defaults")
  void envdMessages() {
    assertThat(json(ProcessRpcs.EventMessage.KEEPALIVE)).isEqualTo("{\"event\":{\"keepalive\":{}}}");
    assertThat(json(new ProcessRpcs.Ended(0, false, "exit status 0", null))).isEqualTo("{\"status\":\"exit status 0\"}");
    assertThat(json(new ProcessRpcs.Ended(-1, true, "signal: killed", "e")))
        .isEqualTo("{\"exitCode\":-1,\"exited\":true,\"status\":\"signal: killed\",\"error\":\"e\"}");
    assertThat(json(FilesystemRpcs.WatchMessage.START)).isEqualTo("{\"start\":{}}");
    assertThat(json(new EnvdCalls.ErrorEnd("not_found", "gone"))).isEqualTo("{\"error\":{\"code\":\"not_found\",\"message\":\"gone\"}}");
  }

  @Test
  @DisplayName("a file entry: size as text, no symlinkTarget or metadata when there is none, metadata in key order")
  void fileEntry() {
    io.sandboxes.local.internal.FileEntry plain = new io.sandboxes.local.internal.FileEntry("f", "FILE_TYPE_FILE", "/f", "5", 420,
        "-rw-r--r--", "user", "user", "t", null, Map.of());
    assertThat(json(new FilesystemRpcs.EntryAnswer(plain))).isEqualTo("{\"entry\":{\"name\":\"f\",\"type\":\"FILE_TYPE_FILE\","
        + "\"path\":\"/f\",\"size\":\"5\",\"mode\":420,\"permissions\":\"-rw-r--r--\",\"owner\":\"user\",\"group\":\"user\","
        + "\"modifiedTime\":\"t\"}}");
    assertThat(json(new FilesystemRpcs.Entries(List.of()))).isEqualTo("{\"entries\":[]}");
    assertThat(json(new FilesApi.Written("/f", "f", "file", new java.util.TreeMap<>(Map.of("b", "2", "a", "1")))))
        .isEqualTo("{\"path\":\"/f\",\"name\":\"f\",\"type\":\"file\",\"metadata\":{\"a\":\"1\",\"b\":\"2\"}}");
  }
}
