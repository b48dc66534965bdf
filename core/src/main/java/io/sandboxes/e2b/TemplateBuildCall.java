package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.BuildOptions;
import io.sandboxes.template.RegistryCredentials;
import io.sandboxes.template.Template;
import io.sandboxes.template.TemplateBuildException;
import io.sandboxes.template.TemplateStep;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One build through E2B's v2 build API, as its SDK runs it: every COPY's files found and hashed
 * first (so a refused source sends nothing), then {@code POST /v3/templates}, an upload of each
 * COPY's files the server does not have, {@code POST /v2/templates/{id}/builds/{buildId}}, and the
 * status read with {@code logsOffset} until {@code ready} or {@code error}.
 */
final class TemplateBuildCall {
  /** The most log entries a failure keeps to report; the callback sees every one. */
  static final int KEPT_LOG_ENTRIES = 10_000;

  private final ControlPlane controlPlane;
  private final Http http;
  private final Template template;
  private final String name;
  private final BuildOptions options;
  private final Deque<BuildLogEntry> log = new ArrayDeque<>();

  TemplateBuildCall(ControlPlane controlPlane, Http http, Template template, String name, BuildOptions options) {
    this.controlPlane = controlPlane;
    this.http = http;
    this.template = template;
    this.name = name;
    this.options = options;
  }

  private record Copy(TemplateStep step, List<TemplateFiles.Entry> entries, String hash) {}

  BuildInfo run() {
    Instant deadline = Instant.now().plus(options.timeout());
    BuildInfo started = start(deadline);
    await(started.templateId(), started.buildId(), deadline);
    return started;
  }

  /**
   * Requests the build, uploads what the server lacks and starts it, as E2B's
   * {@code buildInBackground}: the build then runs on the server without this client.
   */
  BuildInfo start(Instant deadline) {
    List<TemplateStep> steps = template.steps();
    List<@Nullable Copy> copies = new ArrayList<>();
    List<CopyGlob> ignore = steps.stream().anyMatch(s -> s.type() == TemplateStep.Type.COPY)
        ? CopyGlob.ignorePatterns(template.fileIgnorePatterns(), template.contextDir()) : List.of();
    for (TemplateStep s : steps) {
      if (s.type() == TemplateStep.Type.COPY) {
        List<TemplateFiles.Entry> entries = TemplateFiles.collect(template.contextDir(), s.args().get(0), ignore);
        copies.add(new Copy(s, entries, TemplateFiles.hash(s.args().get(0), s.args().get(1), entries)));
      } else {
        copies.add(null);
      }
    }

    client("Requesting build for template: " + name + (options.tags().isEmpty() ? "" : " with tags " + String.join(", ", options.tags())));
    ObjectNode request = Json.object().put("name", name).put("cpuCount", options.cpuCount()).put("memoryMB", options.memoryMB());
    if (!options.tags().isEmpty()) {
      ArrayNode tags = request.putArray("tags");
      options.tags().forEach(tags::add);
    }
    if (options.minFreeDiskMb() != null) {
      request.put("minFreeDiskMb", options.minFreeDiskMb());
    }
    JsonNode requested = controlPlane.requestTemplateBuild(request);
    String templateId;
    String buildId;
    try {
      templateId = Json.requireText(requested, "templateID");
      buildId = Json.requireText(requested, "buildID");
    } catch (IllegalArgumentException e) {
      throw new SandboxException("request a build of template " + name + ": an answer of a shape this client cannot read: "
          + Json.abbreviate(requested), e);
    }
    List<String> tags = new ArrayList<>();
    requested.path("tags").forEach(t -> tags.add(t.asText()));
    client("Template created with ID: " + templateId + ", Build ID: " + buildId);

    ObjectNode body = Json.object();
    if (template.fromImage() != null) {
      body.put("fromImage", template.fromImage());
    } else {
      body.put("fromTemplate", template.fromTemplate());
    }
    if (template.registryCredentials() != null) {
      body.set("fromImageRegistry", registry(template.registryCredentials()));
    }
    if (template.startCmd() != null) {
      body.put("startCmd", template.startCmd());
    }
    if (template.readyCmd() != null) {
      body.put("readyCmd", template.readyCmd());
    }
    body.put("force", options.skipCache());
    ArrayNode stepsJson = body.putArray("steps");
    for (int i = 0; i < steps.size(); i++) {
      TemplateStep s = steps.get(i);
      ObjectNode n = stepsJson.addObject().put("type", s.type().name()).put("force", s.force());
      ArrayNode args = n.putArray("args");
      s.args().forEach(args::add);
      Copy c = copies.get(i);
      if (c != null) {
        n.put("filesHash", c.hash());
        upload(templateId, c, deadline);
      }
    }
    client("All file uploads completed");
    client("Starting building...");
    controlPlane.startTemplateBuild(templateId, buildId, body);
    return new BuildInfo(templateId, buildId, name, tags);
  }

  private void upload(String templateId, Copy c, Instant deadline) {
    String src = c.step().args().get(0);
    JsonNode link = controlPlane.templateFileLink(templateId, c.hash());
    String url = Json.text(link, "url");
    boolean present = link.path("present").asBoolean(false);
    if (url == null || (present && !c.step().forceUpload())) {
      if (!present) {
        throw new SandboxException("upload the files of COPY " + src + ": the server says they are not there but gave no upload URL: "
            + Json.abbreviate(link));
      }
      client("Skipping upload of '" + src + "', already cached");
      return;
    }
    URI target;
    try {
      target = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new SandboxException("upload the files of COPY " + src + ": the upload URL is malformed: " + Json.abbreviate(url), e);
    }
    if (!target.isAbsolute() || !(target.getScheme().equals("https") || target.getScheme().equals("http"))) {
      throw new SandboxException("upload the files of COPY " + src + ": the upload URL is not an http(s) URL: " + Json.abbreviate(url));
    }
    Path tar = null;
    try {
      tar = TemplateFiles.pack(c.entries());
      Duration left = Duration.between(Instant.now(), deadline);
      HttpRequest put = http.request(target).timeout(left.isNegative() || left.isZero() ? Duration.ofSeconds(1) : left)
          .PUT(HttpRequest.BodyPublishers.ofFile(tar)).build();
      HttpResponse<byte[]> r = http.send(put, "upload the files of COPY " + src);
      if (r.statusCode() < 200 || r.statusCode() >= 300) {
        String body = new String(r.body(), StandardCharsets.UTF_8).strip();
        throw new SandboxApiException(r.statusCode(), body.isEmpty() ? null : Json.abbreviate(body), "upload the files of COPY " + src);
      }
    } catch (IOException e) {
      throw new SandboxException("upload the files of COPY " + src + ": " + e, e);
    } finally {
      if (tar != null) {
        try {
          Files.deleteIfExists(tar);
        } catch (IOException ignored) {
          // a temporary file
        }
      }
    }
    client("Uploaded '" + src + "'");
  }

  private void await(String templateId, String buildId, Instant deadline) {
    int offset = 0;
    while (true) {
      JsonNode status = controlPlane.templateBuildStatus(templateId, buildId, offset);
      JsonNode entries = status.path("logEntries");
      for (JsonNode e : entries) {
        deliver(entry(e));
      }
      offset += entries.size();
      String state = String.valueOf(Json.text(status, "status"));
      switch (state) {
        case "ready", "error" -> {
          if (!entries.isEmpty()) {
            continue; // a page holds at most 100 entries: read the rest before ending
          }
          if (state.equals("ready")) {
            return;
          }
          JsonNode reason = status.path("reason");
          String message = Json.text(reason, "message");
          throw new TemplateBuildException(name, templateId, buildId, message == null ? "the server gave no reason" : message,
              Json.text(reason, "step"), List.copyOf(log));
        }
        case "waiting", "building" -> {
          // still going
        }
        default -> throw new SandboxException("build " + buildId + " of template " + name + ": unknown status '" + state + "'");
      }
      if (Instant.now().isAfter(deadline)) {
        throw new TemplateBuildException(name, templateId, buildId, "the build did not finish within " + options.timeout()
            + " (it was still " + state + ")", null, List.copyOf(log));
      }
      try {
        Thread.sleep(options.pollInterval());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SandboxException("build " + buildId + " of template " + name + ": interrupted while waiting for it", e);
      }
    }
  }

  /** E2B's {@code fromImageRegistry}: the credentials as its build API takes them, sent in this request alone. */
  static ObjectNode registry(RegistryCredentials credentials) {
    return switch (credentials) {
      case RegistryCredentials.Basic b -> Json.object().put("type", "registry").put("username", b.username()).put("password", b.password());
      case RegistryCredentials.Aws a -> Json.object().put("type", "aws").put("awsAccessKeyId", a.accessKeyId())
          .put("awsSecretAccessKey", a.secretAccessKey()).put("awsRegion", a.region());
      case RegistryCredentials.Gcp g -> Json.object().put("type", "gcp").put("serviceAccountJson", g.serviceAccountJson());
    };
  }

  static BuildLogEntry entry(JsonNode e) {
    Instant at = Timestamps.instant(Json.text(e, "timestamp"));
    String level = Json.text(e, "level");
    String message = Json.text(e, "message");
    return new BuildLogEntry(at == null ? Instant.now() : at, level == null ? "info" : level, message == null ? "" : message,
        Json.text(e, "step"));
  }

  /** An entry of the client's own, as E2B's SDK logs its progress between the server's. */
  private void client(String message) {
    deliver(new BuildLogEntry(Instant.now(), "info", message, null));
  }

  private void deliver(BuildLogEntry e) {
    if (log.size() == KEPT_LOG_ENTRIES) {
      log.removeFirst();
    }
    log.addLast(e);
    if (options.onLog() != null) {
      options.onLog().accept(e);
    }
  }
}
