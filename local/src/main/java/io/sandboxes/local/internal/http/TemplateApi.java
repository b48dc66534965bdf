package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.Bodies.number;

import static io.sandboxes.local.internal.http.SnapshotsApi.decode;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Templates;
import io.sandboxes.local.internal.runtime.CodeInterpreterTemplate;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * E2B's template build API on the local server: request a build, upload COPY contexts, start the
 * build, poll its status and logs; list, look up by alias and delete built templates. A route for
 * a template that is no built one ({@code base}, the code interpreter, a snapshot) declines, and
 * the snapshots' routes (or the 501) answer it.
 */
final class TemplateApi {
  private static final String FILES = "/templates/([^/]+)/files/([^/]+)";

  private final TemplateBuilds builds;
  private final Registry registry;
  private final Supplier<URI> apiUrl;

  TemplateApi(TemplateBuilds builds, Registry registry, Supplier<URI> apiUrl) {
    this.builds = builds;
    this.registry = registry;
    this.apiUrl = apiUrl;
  }

  /** What a build request answers. */
  record Requested(String templateID, String buildID, @JsonProperty("public") boolean shared, List<String> names,
      List<String> aliases, List<String> tags) {}

  /** Where a COPY context goes, or that it is already there. */
  record FileLink(boolean present, @Nullable String url) {}

  /** Tags given to a build. */
  record Assigned(String buildID, List<String> tags) {}

  /** One tag of a template. */
  record Tag(String tag, String buildID, String createdAt) {}

  /** What an update answers. */
  record Updated(List<String> names) {}

  /** A built template as the listing shows it. */
  record Listed(String templateID, String buildID, int cpuCount, int memoryMB, int diskSizeMB, @JsonProperty("public") boolean shared,
      String createdAt, String updatedAt, int spawnCount, int buildCount, String envdVersion, String buildStatus,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String createdBy,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String lastSpawnedAt, List<String> aliases, List<String> names) {}

  /** A built template with a page of its builds. */
  record WithBuilds(String templateID, @JsonProperty("public") boolean shared, String createdAt, String updatedAt, int spawnCount,
      @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String lastSpawnedAt, List<String> aliases, List<String> names,
      List<Build> builds) {}

  /** One build of a template. */
  record Build(String buildID, String status, String createdAt, String updatedAt, int cpuCount, int memoryMB, String envdVersion,
      @Nullable String finishedAt) {}

  /** The upload of a COPY context: authorized by its link's token, not by the API key. */
  void uploadRoute(RouteTable.Builder t) {
    t.on("PUT", FILES, (ex, m) -> {
      if (ex.request.getLength() > TemplateBuilds.MAX_UPLOAD) {
        throw new RpcError("invalid_argument", "the upload is larger than " + TemplateBuilds.MAX_UPLOAD + " bytes");
      }
      try {
        builds.upload(decode(m.group(1)), decode(m.group(2)), ex.query("token"), ex.body(), ex.request.getLength());
      } catch (RpcError | IOException | RuntimeException e) {
        // refused before the body was read to its end (a spent link): what is left of it is read and dropped when it is not
        // large, so the client gets the answer; past that the answer closes the connection
        ex.discardBody(Exchange.DISCARDED_UPLOAD);
        throw e;
      }
      ex.empty(200);
    });
  }

  /** The routes that need the API key. */
  void routes(RouteTable.Builder t) {
    t.on("POST", "/v3/templates", (ex, m) -> request(ex))
        .on("GET", FILES, (ex, m) -> fileLink(ex, decode(m.group(1)), decode(m.group(2))))
        .on("POST", "/v2/templates/([^/]+)/builds/([^/]+)", (ex, m) -> {
          BuildStartBody body = RequestBody.read(ex, BuildStartBody.class);
          builds.start(decode(m.group(1)), decode(m.group(2)), body::value);
          ex.empty(202);
        })
        .on("GET", "/templates/([^/]+)/builds/([^/]+)/status",
            (ex, m) -> Bodies.json(ex, 200, BuildStatus.of(ex, builds, decode(m.group(1)), decode(m.group(2)))))
        .on("POST", "/templates/tags", (ex, m) -> {
          AssignTagsBody body = RequestBody.read(ex, AssignTagsBody.class);
          TemplateBuilds.Assigned a = builds.assignTags(body.target(), listOrEmpty(body.tags()));
          Bodies.json(ex, 201, new Assigned(a.buildId(), a.tags()));
        })
        .on("DELETE", "/templates/tags", (ex, m) -> {
          RemoveTagsBody body = RequestBody.read(ex, RemoveTagsBody.class);
          builds.removeTags(body.name(), listOrEmpty(body.tags()));
          ex.empty(204);
        })
        .add("GET", "/templates/([^/]+)/tags", (ex, m) -> tags(ex, decode(m.group(1))))
        .add("GET", "/templates/([^/]+)", (ex, m) -> template(ex, decode(m.group(1))))
        .add("PATCH", "(?:/v2)?/templates/([^/]+)", (ex, m) -> update(ex, decode(m.group(1))))
        .on("GET", "/templates", (ex, m) -> Bodies.json(ex, 200, builds.list().stream().map(TemplateApi::listed).toList()))
        .add("GET", "/templates/aliases/(.*)", (ex, m) -> alias(ex, decode(m.group(1))))
        .add("DELETE", "/templates/(.*)", (ex, m) -> {
          String id = decode(m.group(1));
          if (id.equals(Templates.BASE) || id.contains("/") || !builds.delete(id, registry.listOnceRemoved(Registry::madeFromATemplate))) {
            return false;
          }
          ex.empty(204);
          return true;
        });
  }

  private static final String TAGS = "'tags' must be a list of strings";

  /** {@code POST /v3/templates}: names read as text, tags strictly strings, sizes read leniently. */
  record BuildRequestBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String name,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String alias, @Refusal(TAGS) @Nullable List<String> tags,
      @JsonDeserialize(using = Lenient.Int.class) @Nullable Integer cpuCount,
      @JsonDeserialize(using = Lenient.Int.class) @Nullable Integer memoryMB,
      @Refusal("'minFreeDiskMb' must be a whole number of MiB") @Nullable Long minFreeDiskMb) {}

  /** {@code POST /templates/tags}: the target as {@code name:tag}, and the tags to give it. */
  record AssignTagsBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String target, @Refusal(TAGS) @Nullable List<String> tags) {}

  /** {@code DELETE /templates/tags}: the template's name and the tags to take away. */
  record RemoveTagsBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String name, @Refusal(TAGS) @Nullable List<String> tags) {}

  /** {@code PATCH /templates/{id}}: only {@code public}, strictly a flag. */
  record UpdateBody(@Refusal(PUBLIC) @JsonProperty("public") @Nullable Boolean shared) {}

  private static final String PUBLIC = "'public' must be true or false";

  private static List<String> listOrEmpty(@Nullable List<String> list) {
    return list == null ? List.of() : list;
  }

  private void request(Exchange ex) throws RpcError, IOException {
    BuildRequestBody body = RequestBody.read(ex, BuildRequestBody.class);
    String name = body.name() != null ? body.name() : body.alias();
    UnservedFields.build(body.minFreeDiskMb(), registry.diskSizeMB());
    TemplateBuilds.Requested r = builds.request(name, listOrEmpty(body.tags()), Objects.requireNonNullElse(body.cpuCount(), 2),
        Objects.requireNonNullElse(body.memoryMB(), 2048));
    Bodies.json(ex, 202, new Requested(r.templateId(), r.buildId(), false, List.of(r.name()), List.of(r.name()), r.tags()));
  }

  private void fileLink(Exchange ex, String templateId, String hash) throws RpcError {
    String token = builds.fileLink(templateId, hash);
    String url = token == null ? null
        : apiUrl.get() + "/templates/" + enc(templateId) + "/files/" + enc(hash) + "?token=" + enc(token);
    Bodies.json(ex, 201, new FileLink(token == null, url));
  }

  private boolean tags(Exchange ex, String id) throws RpcError {
    if (builds.findTemplate(id).isEmpty()) {
      return notBuilt(id);
    }
    Bodies.json(ex, 200, builds.tagsOf(id).stream().map(t -> new Tag(t.tag(), t.buildId(), t.createdAt().toString())).toList());
    return true;
  }

  private boolean template(Exchange ex, String id) throws RpcError {
    var info = builds.template(id);
    if (info.isEmpty()) {
      return notBuilt(id);
    }
    TemplateBuilds.TemplateInfo t = info.get();
    int limit = number(ex.query("limit"), "limit", 1, 100, 100);
    int from = number(ex.query("nextToken"), "nextToken", 0, Integer.MAX_VALUE, 0);
    List<TemplateBuilds.BuildInfo> all = t.builds();
    List<Build> page = all.subList(Math.min(from, all.size()), Math.min(all.size(), from + limit)).stream()
        .map(b -> new Build(b.buildId(), b.state(), b.createdAt().toString(), b.updatedAt().toString(), b.cpuCount(), b.memoryMB(),
            Registry.ENVD_VERSION, b.finishedAt() == null ? null : b.finishedAt().toString()))
        .toList();
    if (from + limit < all.size()) {
      ex.response.getHeaders().put("X-Next-Token", Integer.toString(from + limit));
    }
    Bodies.json(ex, 200, new WithBuilds(t.templateId(), false, t.createdAt().toString(), t.updatedAt().toString(), 0, null,
        List.of(t.name()), List.of(t.name()), page));
    return true;
  }

  private boolean update(Exchange ex, String id) throws RpcError, IOException {
    var t = builds.findTemplate(id);
    if (t.isEmpty()) {
      return notBuilt(id);
    }
    JsonNode body = Bodies.readJson(ex);
    for (var it = body.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!f.equals("public")) {
        throw new RpcError("invalid_argument", "'" + f + "' cannot be updated: a template's update takes 'public' only");
      }
    }
    Boolean pub = RequestBody.bind(body, UpdateBody.class).shared();
    if (pub == null) {
      throw new RpcError("invalid_argument", PUBLIC);
    }
    if (pub) {
      throw new RpcError("invalid_argument", "the local runtime has one team and no public templates: 'public' can only be false");
    }
    Bodies.json(ex, 200, new Updated(List.of(t.get().name())));
    return true;
  }

  private boolean alias(Exchange ex, String alias) {
    var t = builds.findTemplate(alias);
    if (t.isEmpty() || !t.get().name().equals(alias)) {
      return false; // base and snapshots are answered by the snapshots' routes
    }
    Bodies.json(ex, 200, new SnapshotsApi.Alias(t.get().templateId(), false));
    return true;
  }

  private static Listed listed(TemplateBuilds.Built t) {
    return new Listed(t.templateId(), t.buildId(), 2, 2048, 0, false, t.createdAt().toString(), t.createdAt().toString(), 0, 1,
        Registry.ENVD_VERSION, "ready", null, null, List.of(t.name()), List.of(t.name()));
  }

  /**
   * A template reference that is no built template: base, the code interpreter and snapshots are
   * left to the rest of the API (which does not serve their builds and tags); anything else is not found.
   */
  private boolean notBuilt(String id) throws RpcError {
    if (id.equals(Templates.BASE) || CodeInterpreterTemplate.ALIASES.contains(id) || registry.templates().find(id).isPresent()) {
      return false;
    }
    throw new RpcError("not_found", "template '" + id + "' not found");
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** A build's status and a page of its log, as E2B's {@code TemplateBuildInfo}. */
  record BuildStatus(String templateID, String buildID, String status, List<String> logs, List<LogEntry> logEntries,
      @Nullable Reason reason) {

    static BuildStatus of(Exchange ex, TemplateBuilds builds, String templateId, String buildId) throws RpcError {
      int offset = number(ex.query("logsOffset"), "logsOffset", 0, Integer.MAX_VALUE, 0);
      int limit = number(ex.query("limit"), "limit", 0, 100, 100);
      TemplateBuilds.Status s = builds.status(templateId, buildId, offset, limit);
      String level = ex.query("level");
      // the offset counts every entry; a level filter only narrows what this page shows
      List<TemplateBuilds.LogEntry> shown = s.entries().stream()
          .filter(e -> level == null || level.isEmpty() || level.equals(e.level())).toList();
      Reason reason = s.reason() == null ? null : new Reason(s.reason(), s.reasonStep(), s.reasonEntries().stream()
          .map(e -> new ReasonEntry(e.timestamp().toString(), e.level(), e.message(), e.step())).toList());
      return new BuildStatus(s.templateId(), s.buildId(), s.state(), shown.stream().map(TemplateBuilds.LogEntry::message).toList(),
          shown.stream().map(e -> new LogEntry(e.timestamp().toString(), e.level(), e.message(), e.step())).toList(), reason);
    }
  }

  /** One line of a build's log, with its step when it has one. */
  record LogEntry(String timestamp, String level, String message, @Nullable String step) {}

  /** Why a build failed, and at which step. */
  record Reason(String message, @Nullable String step, List<ReasonEntry> logEntries) {}

  /** A line of the failed step's log; its step shown as null when it has none. */
  record ReasonEntry(String timestamp, String level, String message, @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String step) {}
}
