package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.RpcError;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Templates;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * E2B's template build API on the local server: request a build, upload COPY contexts, start the
 * build, poll its status and logs; list, look up by alias and delete built templates.
 */
final class TemplateApi {
  private static final Pattern FILES = Pattern.compile("^/templates/([^/]+)/files/([^/]+)$");
  private static final Pattern START = Pattern.compile("^/v2/templates/([^/]+)/builds/([^/]+)$");
  private static final Pattern STATUS = Pattern.compile("^/templates/([^/]+)/builds/([^/]+)/status$");
  private static final Pattern TEMPLATE = Pattern.compile("^(?:/v2)?/templates/([^/]+)$");
  private static final Pattern TAGS_OF = Pattern.compile("^/templates/([^/]+)/tags$");

  private final TemplateBuilds builds;
  private final Registry registry;
  private final Supplier<URI> apiUrl;

  TemplateApi(TemplateBuilds builds, Registry registry, Supplier<URI> apiUrl) {
    this.builds = builds;
    this.registry = registry;
    this.apiUrl = apiUrl;
  }

  /** The upload of a COPY context: authorized by its link's token, not by the API key. */
  boolean upload(Exchange ex) throws RpcError, IOException {
    Matcher m = FILES.matcher(ex.path());
    if (!ex.method().equals("PUT") || !m.matches()) {
      return false;
    }
    if (ex.request.getLength() > TemplateBuilds.MAX_UPLOAD) {
      throw new RpcError("invalid_argument", "the upload is larger than " + TemplateBuilds.MAX_UPLOAD + " bytes");
    }
    builds.upload(decode(m.group(1)), decode(m.group(2)), ex.query("token"), ex.body(), ex.request.getLength());
    ex.empty(200);
    return true;
  }

  /** @return whether the request was one of the template API's, now answered */
  boolean route(Exchange ex, JsonBody json) throws RpcError, IOException {
    String method = ex.method();
    String path = ex.path();
    if (path.equals("/v3/templates") && method.equals("POST")) {
      JsonNode body = json.read(ex);
      String name = Json.text(body, "name");
      if (name == null) {
        name = Json.text(body, "alias");
      }
      List<String> tags = stringList(body, "tags");
      TemplateBuilds.Requested r = builds.request(name, tags, body.path("cpuCount").asInt(2), body.path("memoryMB").asInt(2048));
      ObjectNode out = Json.object().put("templateID", r.templateId()).put("buildID", r.buildId()).put("public", false);
      out.putArray("names").add(r.name());
      out.putArray("aliases").add(r.name());
      ArrayNode t = out.putArray("tags");
      r.tags().forEach(t::add);
      ex.json(202, out);
      return true;
    }
    Matcher files = FILES.matcher(path);
    if (files.matches() && method.equals("GET")) {
      String templateId = decode(files.group(1));
      String hash = decode(files.group(2));
      String token = builds.fileLink(templateId, hash);
      ObjectNode out = Json.object().put("present", token == null);
      if (token != null) {
        out.put("url", apiUrl.get() + "/templates/" + enc(templateId) + "/files/" + enc(hash) + "?token=" + enc(token));
      }
      ex.json(201, out);
      return true;
    }
    Matcher start = START.matcher(path);
    if (start.matches() && method.equals("POST")) {
      builds.start(decode(start.group(1)), decode(start.group(2)), json.read(ex));
      ex.empty(202);
      return true;
    }
    Matcher status = STATUS.matcher(path);
    if (status.matches() && method.equals("GET")) {
      int offset = number(ex.query("logsOffset"), "logsOffset", 0, Integer.MAX_VALUE, 0);
      int limit = number(ex.query("limit"), "limit", 0, 100, 100);
      TemplateBuilds.Status s = builds.status(decode(status.group(1)), decode(status.group(2)), offset, limit);
      ObjectNode out = Json.object().put("templateID", s.templateId()).put("buildID", s.buildId()).put("status", s.state());
      ArrayNode logs = out.putArray("logs");
      ArrayNode entries = out.putArray("logEntries");
      String level = ex.query("level");
      for (TemplateBuilds.LogEntry e : s.entries()) {
        ObjectNode n = entries.addObject().put("timestamp", e.timestamp().toString()).put("level", e.level()).put("message", e.message());
        if (e.step() != null) {
          n.put("step", e.step());
        }
        logs.add(e.message());
      }
      if (level != null && !level.isEmpty()) {
        // the offset counts every entry; a level filter only narrows what this page shows
        for (int i = entries.size() - 1; i >= 0; i--) {
          if (!entries.get(i).path("level").asText().equals(level)) {
            entries.remove(i);
            logs.remove(i);
          }
        }
      }
      if (s.reason() != null) {
        ObjectNode reason = out.putObject("reason").put("message", s.reason());
        if (s.reasonStep() != null) {
          reason.put("step", s.reasonStep());
        }
        ArrayNode re = reason.putArray("logEntries");
        for (TemplateBuilds.LogEntry e : s.reasonEntries()) {
          re.addObject().put("timestamp", e.timestamp().toString()).put("level", e.level()).put("message", e.message())
              .put("step", e.step());
        }
      }
      ex.json(200, out);
      return true;
    }
    if (path.equals("/templates/tags") && method.equals("POST")) {
      JsonNode body = json.read(ex);
      TemplateBuilds.Assigned a = builds.assignTags(Json.text(body, "target"), stringList(body, "tags"));
      ObjectNode out = Json.object().put("buildID", a.buildId());
      a.tags().forEach(out.putArray("tags")::add);
      ex.json(201, out);
      return true;
    }
    if (path.equals("/templates/tags") && method.equals("DELETE")) {
      JsonNode body = json.read(ex);
      builds.removeTags(Json.text(body, "name"), stringList(body, "tags"));
      ex.empty(204);
      return true;
    }
    Matcher tagsOf = TAGS_OF.matcher(path);
    if (tagsOf.matches() && method.equals("GET")) {
      String id = decode(tagsOf.group(1));
      if (builds.findTemplate(id).isEmpty()) {
        return notBuilt(id);
      }
      ArrayNode out = Json.array();
      for (TemplateBuilds.TagInfo t : builds.tagsOf(id)) {
        out.addObject().put("tag", t.tag()).put("buildID", t.buildId()).put("createdAt", t.createdAt().toString());
      }
      ex.json(200, out);
      return true;
    }
    Matcher template = TEMPLATE.matcher(path);
    if (template.matches() && method.equals("GET") && !path.startsWith("/v2/")) {
      String id = decode(template.group(1));
      var info = builds.template(id);
      if (info.isEmpty()) {
        return notBuilt(id);
      }
      templateWithBuilds(ex, info.get());
      return true;
    }
    if (template.matches() && method.equals("PATCH")) {
      String id = decode(template.group(1));
      var t = builds.findTemplate(id);
      if (t.isEmpty()) {
        return notBuilt(id);
      }
      JsonNode body = json.read(ex);
      for (var it = body.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        if (!f.equals("public")) {
          throw new RpcError("invalid_argument", "'" + f + "' cannot be updated: a template's update takes 'public' only");
        }
      }
      JsonNode pub = body.get("public");
      if (pub == null || !pub.isBoolean()) {
        throw new RpcError("invalid_argument", "'public' must be true or false");
      }
      if (pub.asBoolean()) {
        throw new RpcError("invalid_argument", "the local runtime has one team and no public templates: 'public' can only be false");
      }
      ObjectNode out = Json.object();
      out.putArray("names").add(t.get().name());
      ex.json(200, out);
      return true;
    }
    if (path.equals("/templates") && method.equals("GET")) {
      ArrayNode out = Json.array();
      for (TemplateBuilds.Built t : builds.list()) {
        ObjectNode n = out.addObject().put("templateID", t.templateId()).put("buildID", t.buildId()).put("cpuCount", 2)
            .put("memoryMB", 2048).put("diskSizeMB", 0).put("public", false).put("createdAt", t.createdAt().toString())
            .put("updatedAt", t.createdAt().toString()).put("spawnCount", 0).put("buildCount", 1)
            .put("envdVersion", Registry.ENVD_VERSION).put("buildStatus", "ready");
        n.putNull("createdBy");
        n.putNull("lastSpawnedAt");
        n.putArray("aliases").add(t.name());
        n.putArray("names").add(t.name());
      }
      ex.json(200, out);
      return true;
    }
    if (path.startsWith("/templates/aliases/") && method.equals("GET")) {
      String alias = decode(path.substring("/templates/aliases/".length()));
      var t = builds.findTemplate(alias);
      if (t.isEmpty() || !t.get().name().equals(alias)) {
        return false; // base and snapshots are answered by the snapshot section
      }
      ex.json(200, Json.object().put("templateID", t.get().templateId()).put("public", false));
      return true;
    }
    if (path.startsWith("/templates/") && method.equals("DELETE")) {
      String id = decode(path.substring("/templates/".length()));
      if (id.equals(Templates.BASE) || id.contains("/") || !builds.delete(id, registry.list())) {
        return false;
      }
      ex.empty(204);
      return true;
    }
    return false;
  }

  private void templateWithBuilds(Exchange ex, TemplateBuilds.TemplateInfo t) throws RpcError {
    int limit = number(ex.query("limit"), "limit", 1, 100, 100);
    int from = number(ex.query("nextToken"), "nextToken", 0, Integer.MAX_VALUE, 0);
    ObjectNode out = Json.object().put("templateID", t.templateId()).put("public", false).put("createdAt", t.createdAt().toString())
        .put("updatedAt", t.updatedAt().toString()).put("spawnCount", 0);
    out.putNull("lastSpawnedAt");
    out.putArray("aliases").add(t.name());
    out.putArray("names").add(t.name());
    ArrayNode list = out.putArray("builds");
    List<TemplateBuilds.BuildInfo> all = t.builds();
    for (TemplateBuilds.BuildInfo b : all.subList(Math.min(from, all.size()), Math.min(all.size(), from + limit))) {
      ObjectNode n = list.addObject().put("buildID", b.buildId()).put("status", b.state()).put("createdAt", b.createdAt().toString())
          .put("updatedAt", b.updatedAt().toString()).put("cpuCount", b.cpuCount()).put("memoryMB", b.memoryMB())
          .put("envdVersion", Registry.ENVD_VERSION);
      if (b.finishedAt() != null) {
        n.put("finishedAt", b.finishedAt().toString());
      }
    }
    if (from + limit < all.size()) {
      ex.response.getHeaders().put("X-Next-Token", Integer.toString(from + limit));
    }
    ex.json(200, out);
  }

  /**
   * A template reference that is no built template: base, the code interpreter and snapshots are
   * left to the rest of the API (which does not serve their builds and tags); anything else is not found.
   */
  private boolean notBuilt(String id) throws RpcError {
    if (id.equals(Templates.BASE) || io.sandboxes.local.internal.docker.CodeInterpreterImage.ALIASES.contains(id)
        || registry.templates().find(id).isPresent()) {
      return false;
    }
    throw new RpcError("not_found", "template '" + id + "' not found");
  }

  private static List<String> stringList(JsonNode body, String field) throws RpcError {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return List.of();
    }
    if (!v.isArray()) {
      throw new RpcError("invalid_argument", "'" + field + "' must be a list of strings");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode x : v) {
      if (!x.isTextual()) {
        throw new RpcError("invalid_argument", "'" + field + "' must be a list of strings");
      }
      out.add(x.asText());
    }
    return out;
  }

  /** Reads a JSON request body the way the rest of the API does. */
  interface JsonBody {
    JsonNode read(Exchange ex) throws RpcError, IOException;
  }

  private static int number(String raw, String field, int min, int max, int fallback) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return fallback;
    }
    try {
      int v = Integer.parseInt(raw);
      if (v >= min && v <= max) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "'" + field + "' must be a number from " + min + " to " + max + ", got '" + raw + "'");
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
