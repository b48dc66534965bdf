package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.BuildOptions;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.Template;
import io.sandboxes.template.TemplateTag;
import io.sandboxes.template.TemplateTagInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Template management as E2B's {@code Template} statics offer it: a build started in the
 * background and its status read, whether a name exists, and tags. Obtained from
 * {@link E2BApi#templates()}, whose HTTP client, request timeout and retries it shares.
 * Thread-safe. To build and wait for the end, see
 * {@link E2BApi#buildTemplate(Template, String, BuildOptions)}.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=templates :
 * E2BTemplates templates = e2b.templates();
 * BuildInfo started = templates.buildInBackground(Template.fromTemplate("base").aptInstall("git"), "with-git");
 * BuildStatus status = templates.buildStatus(started, 0);   // WAITING, BUILDING, READY or ERROR
 * templates.assignTags("with-git:default", List.of("stable"));
 * }
 *
 * @since 0.1
 */
public final class E2BTemplates {
  private final E2BApi api;
  private final ControlPlane controlPlane;
  private final Http http;

  E2BTemplates(E2BApi api, ControlPlane controlPlane, Http http) {
    this.api = api;
    this.controlPlane = controlPlane;
    this.http = http;
  }

  /**
   * Starts a build and returns without waiting for it, as E2B's {@code Template.buildInBackground}:
   * the COPY files are hashed, the build requested, the files the server lacks uploaded, and the
   * build started. Read its progress with {@link #buildStatus(BuildInfo, int)}.
   *
   * @param template what to build
   * @param name the template's name, or {@code name:tag}
   * @param options resources, tags and cache; the timeout bounds the uploads, and
   *     {@link BuildOptions#onLog} sees the client's own progress lines
   * @return the template's and the build's ids, its name and tags
   * @throws IllegalArgumentException when the name is blank or a COPY source cannot be used;
   *     nothing is sent
   * @throws io.sandboxes.SandboxApiException when the server refuses a request
   */
  public BuildInfo buildInBackground(Template template, String name, BuildOptions options) {
    Objects.requireNonNull(template, "template");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(options, "options");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    api.provider().ensureOpen();
    return new TemplateBuildCall(controlPlane, http, template, name, options).start(Instant.now().plus(options.timeout()));
  }

  /**
   * Starts a build with the default options and returns without waiting for it.
   *
   * @param template what to build
   * @param name the template's name, or {@code name:tag}
   * @return the template's and the build's ids, its name and tags
   * @see #buildInBackground(Template, String, BuildOptions)
   */
  public BuildInfo buildInBackground(Template template, String name) {
    return buildInBackground(template, name, BuildOptions.defaults());
  }

  /**
   * Reads a build's status and a page of its log, as E2B's {@code Template.getBuildStatus}.
   *
   * @param templateId the template's id
   * @param buildId the build's id
   * @param logsOffset how many log entries to skip, from 0; read on from
   *     {@code logsOffset + logEntries().size()}
   * @return the status
   * @throws io.sandboxes.SandboxApiException with status 404 when there is no such build
   * @throws SandboxException when the answer names a state this client does not know
   */
  public BuildStatus buildStatus(String templateId, String buildId, int logsOffset) {
    Objects.requireNonNull(templateId, "templateId");
    Objects.requireNonNull(buildId, "buildId");
    if (logsOffset < 0) {
      throw new IllegalArgumentException("logsOffset must not be negative, got " + logsOffset);
    }
    api.provider().ensureOpen();
    JsonNode s = controlPlane.templateBuildStatus(templateId, buildId, logsOffset);
    try {
      BuildStatus.Reason reason = null;
      JsonNode r = s.get("reason");
      if (r != null && r.isObject()) {
        String message = Json.text(r, "message");
        reason = new BuildStatus.Reason(message == null ? "the server gave no reason" : message, Json.text(r, "step"), entries(r));
      }
      return new BuildStatus(Json.requireText(s, "templateID"), Json.requireText(s, "buildID"),
          BuildStatus.State.of(Json.requireText(s, "status")), entries(s), reason);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new SandboxException("read the status of build " + buildId + " of template " + templateId
          + ": an answer of a shape this client cannot read (" + e.getMessage() + "): " + Json.abbreviate(s), e);
    }
  }

  /**
   * Reads the status of a build this client started.
   *
   * @param build what {@link #buildInBackground} answered
   * @param logsOffset how many log entries to skip, from 0
   * @return the status
   * @see #buildStatus(String, String, int)
   */
  public BuildStatus buildStatus(BuildInfo build, int logsOffset) {
    Objects.requireNonNull(build, "build");
    return buildStatus(build.templateId(), build.buildId(), logsOffset);
  }

  /**
   * Waits for a build started in the background to end, reading its status and its whole log as
   * {@link E2BApi#buildTemplate(Template, String, BuildOptions)} does (every
   * {@link BuildOptions#DEFAULT_POLL_INTERVAL} while it runs).
   *
   * {@snippet class=io.sandboxes.snippets.CoreSnippets region=wait-for-build :
   * BuildInfo started = templates.buildInBackground(Template.fromTemplate("base").aptInstall("git"), "with-git");
   * BuildStatus done = templates.waitForBuild(started, Duration.ofMinutes(10), entry -> System.out.println(entry.message()));
   * }
   *
   * @param build what {@link #buildInBackground} answered
   * @param timeout how long to wait at most, positive
   * @param onLog called with each log entry, in order, on this thread; or null
   * @return the final status: {@link BuildStatus.State#READY}, with every log entry of the build
   * @throws io.sandboxes.template.TemplateBuildException when the build ends in
   *     {@link BuildStatus.State#ERROR} (the server's reason and step, and the log), or has not
   *     ended within the timeout (the build goes on: wait again, or read its status)
   * @throws SandboxException when interrupted (the interrupt flag kept) or a status cannot be read
   */
  public BuildStatus waitForBuild(BuildInfo build, Duration timeout, @Nullable Consumer<BuildLogEntry> onLog) {
    return BuildWait.await(this, Objects.requireNonNull(build, "build"), Objects.requireNonNull(timeout, "timeout"), onLog);
  }

  /**
   * Waits for a build started in the background to end, without a log callback.
   *
   * @param build what {@link #buildInBackground} answered
   * @param timeout how long to wait at most, positive
   * @return the final status, with every log entry of the build
   * @see #waitForBuild(BuildInfo, Duration, Consumer)
   */
  public BuildStatus waitForBuild(BuildInfo build, Duration timeout) {
    return waitForBuild(build, timeout, null);
  }

  private static List<BuildLogEntry> entries(JsonNode parent) {
    List<BuildLogEntry> out = new ArrayList<>();
    parent.path("logEntries").forEach(e -> out.add(TemplateBuildCall.entry(e)));
    return out;
  }

  /**
   * Tells whether a template name exists, as E2B's {@code Template.exists}.
   *
   * @param name a template's name, {@code base}, or a snapshot's name or id
   * @return true when it exists, also when another team owns it (403); false when the server says 404
   * @throws io.sandboxes.SandboxApiException for any other answer: a failure to look is never absence
   */
  public boolean exists(String name) {
    return api.templateExists(name);
  }

  /**
   * E2B's older name for {@link #exists(String)}, {@code Template.aliasExists}.
   *
   * @param alias a template's alias
   * @return as {@link #exists(String)}
   */
  public boolean aliasExists(String alias) {
    return exists(alias);
  }

  /**
   * Points tags at a build, as E2B's {@code Template.assignTags}.
   *
   * @param target the build to tag, as {@code name:tag} (a bare name means its {@code default} tag)
   * @param tags one or more tags
   * @return the build the tags now point at, and the tags as the server took them
   * @throws io.sandboxes.SandboxApiException with status 404 when there is no such template or tag,
   *     400 for a malformed tag
   */
  public TemplateTagInfo assignTags(String target, List<String> tags) {
    requireText(target, "target");
    List<String> t = requireTags(tags);
    api.provider().ensureOpen();
    JsonNode a = controlPlane.assignTemplateTags(target, t);
    try {
      List<String> assigned = new ArrayList<>();
      a.path("tags").forEach(x -> assigned.add(x.asText()));
      return new TemplateTagInfo(Json.requireText(a, "buildID"), assigned);
    } catch (IllegalArgumentException e) {
      throw new SandboxException("assign tags to template " + target + ": an answer of a shape this client cannot read: "
          + Json.abbreviate(a), e);
    }
  }

  /**
   * Takes tags off a template, as E2B's {@code Template.removeTags}; the builds stay.
   *
   * @param name the template's name
   * @param tags one or more tags
   * @throws io.sandboxes.SandboxApiException with status 404 when there is no such template or tag
   */
  public void removeTags(String name, List<String> tags) {
    requireText(name, "name");
    List<String> t = requireTags(tags);
    api.provider().ensureOpen();
    controlPlane.removeTemplateTags(name, t);
  }

  /**
   * Lists a template's tags, as E2B's {@code Template.getTags}.
   *
   * @param template the template's id or name
   * @return each tag with the build it points at and when it was assigned
   * @throws io.sandboxes.SandboxApiException with status 404 when there is no such template
   */
  public List<TemplateTag> tags(String template) {
    requireText(template, "template");
    api.provider().ensureOpen();
    List<TemplateTag> out = new ArrayList<>();
    for (JsonNode row : controlPlane.templateTags(template)) {
      try {
        out.add(new TemplateTag(Json.requireText(row, "tag"), Json.requireText(row, "buildID"),
            Objects.requireNonNull(Timestamps.instant(Json.requireText(row, "createdAt")), "createdAt")));
      } catch (RuntimeException e) {
        throw new SandboxException("a template tag of a shape this client cannot read: " + Json.abbreviate(row), e);
      }
    }
    return out;
  }

  private static List<String> requireTags(List<String> tags) {
    List<String> t = List.copyOf(Objects.requireNonNull(tags, "tags"));
    if (t.isEmpty()) {
      throw new IllegalArgumentException("name at least one tag");
    }
    t.forEach(x -> requireText(x, "tag"));
    return t;
  }

  private static void requireText(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + " must not be blank");
    }
  }
}
