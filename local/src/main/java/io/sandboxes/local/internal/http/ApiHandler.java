package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.RpcError;
import io.sandboxes.local.internal.StructuredLog;
import io.sandboxes.local.internal.Templates;
import io.sandboxes.local.internal.Volumes;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * E2B's control plane, as the official SDKs call it: create (v1 and v2), get, list (v2 with
 * state and metadata filters and token paging; v1 running only), kill, connect (v1 and v2),
 * timeout and refreshes, fork. Errors are {@code {code, message}} with the same HTTP status.
 */
public final class ApiHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);
  private static final Pattern SANDBOX_PATH = Pattern.compile("^/(?:v2/)?sandboxes/([^/]+)(?:/([a-z]+))?$");
  /** The longest lifetime a sandbox may be given, as E2B's paid plans allow: 24 hours. */
  static final Duration MAX_TIMEOUT = Duration.ofHours(24);

  private static final java.util.regex.Pattern FORWARD = java.util.regex.Pattern.compile("/local/sandboxes/([^/]+)/ports/([^/]+)");

  private final Registry registry;
  private final Volumes volumes;
  private final byte[] apiKey;

  private final java.util.function.Supplier<io.sandboxes.EgressProbe> egressProbe;
  private final java.util.function.BiFunction<String, Integer, java.net.URI> forward;
  /** E2B's default egress: a create that does not say {@code allow_internet_access} gets it (else: nothing reachable). */
  private final boolean internetByDefault;

  private volatile @org.jspecify.annotations.Nullable TemplateApi templateApi;
  private volatile io.sandboxes.local.internal.@org.jspecify.annotations.Nullable TemplateBuilds templateBuilds;

  private volatile java.util.function.@org.jspecify.annotations.Nullable Supplier<ObjectNode> serverInfo;

  /** Answers {@code GET /local/server} (with the API key) with what this supplies: how the server is set up. */
  public void serverInfo(java.util.function.Supplier<ObjectNode> info) {
    this.serverInfo = info;
  }

  /** Serves E2B's template build API from these builds; upload links point at {@code apiUrl}. */
  public void templateBuilds(io.sandboxes.local.internal.TemplateBuilds builds, java.util.function.Supplier<java.net.URI> apiUrl) {
    this.templateBuilds = builds;
    this.templateApi = new TemplateApi(builds, registry, apiUrl);
  }

  public ApiHandler(Registry registry, Volumes volumes, String apiKey, java.util.function.Supplier<io.sandboxes.EgressProbe> egressProbe,
      java.util.function.BiFunction<String, Integer, java.net.URI> forward, boolean internetByDefault) {
    this.registry = registry;
    this.internetByDefault = internetByDefault;
    this.volumes = volumes;
    this.egressProbe = egressProbe;
    this.forward = forward;
    this.apiKey = apiKey.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    Exchange ex = new Exchange(request, response, callback);
    try {
      route(ex);
    } catch (RpcError e) {
      error(ex, Connect.httpStatus(e.code()), e.getMessage());
    } catch (Exchange.BodyTooLarge e) {
      if (!ex.completed()) {
        ex.tooLarge(e);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("{} {} failed", ex.method(), ex.path(), e);
      if (!ex.completed()) {
        error(ex, 500, "internal error: " + e.getMessage());
      } else {
        ex.abort(e);
      }
    }
    return true;
  }

  static void error(Exchange ex, int status, String message) {
    ex.json(status, Json.object().put("code", status).put("message", message));
  }

  private boolean authorized(Exchange ex) {
    String key = ex.header("X-API-KEY");
    return key != null && MessageDigest.isEqual(key.getBytes(StandardCharsets.UTF_8), apiKey);
  }

  private void route(Exchange ex) throws RpcError, IOException {
    String method = ex.method();
    String path = ex.path();
    if (path.equals("/health") && method.equals("GET")) {
      ex.empty(204);
      return;
    }
    TemplateApi templateApi = this.templateApi;
    if (templateApi != null && templateApi.upload(ex)) {
      return; // authorized by the upload link's token
    }
    if (!authorized(ex)) {
      error(ex, 401, ex.header("X-API-KEY") == null ? "Missing API key (X-API-KEY header)" : "Invalid API key");
      return;
    }
    if (path.equals("/sandboxes") || path.equals("/v2/sandboxes")) {
      switch (method) {
        case "POST" -> create(ex, path.startsWith("/v2/"));
        case "GET" -> list(ex, path.startsWith("/v2/"));
        default -> error(ex, 405, "method " + method + " is not allowed on " + path);
      }
      return;
    }
    java.util.function.Supplier<ObjectNode> info = serverInfo;
    if (path.equals("/local/server") && method.equals("GET") && info != null) {
      // not E2B's: lets a client that found this server check it is the one it means to use
      ex.json(200, info.get());
      return;
    }
    if (path.equals("/local/egress-probe") && method.equals("GET")) {
      // not E2B's: lets a client verify egress against this server's own witnesses
      io.sandboxes.EgressProbe p = egressProbe.get();
      ObjectNode out = Json.object().put("allowedHost", p.allowedHost()).put("deniedHost", p.deniedHost()).put("rawIp", p.rawIp())
          .put("scheme", p.scheme());
      p.allowOut().forEach(out.putArray("allowOut")::add);
      ex.json(200, out);
      return;
    }
    java.util.regex.Matcher port = FORWARD.matcher(path);
    if (port.matches() && method.equals("POST")) {
      // not E2B's: reach a sandbox's port from this machine (LocalServer.forward over HTTP)
      int number;
      try {
        number = Integer.parseInt(port.group(2));
      } catch (NumberFormatException e) {
        throw new RpcError("invalid_argument", "port must be between 1 and 65535, got " + port.group(2));
      }
      try {
        ex.json(200, Json.object().put("url", forward.apply(port.group(1), number).toString()));
      } catch (io.sandboxes.SandboxNotFoundException e) {
        throw new RpcError("not_found", "sandbox \"" + port.group(1) + "\" doesn't exist or you don't have access to it");
      } catch (IllegalArgumentException e) {
        throw new RpcError("invalid_argument", e.getMessage());
      } catch (io.sandboxes.SandboxException e) {
        if (e.getCause() instanceof io.sandboxes.local.internal.PortForwards.LimitReached) {
          throw new RpcError("resource_exhausted", e.getMessage());
        }
        throw e;
      }
      return;
    }
    if (path.equals("/volumes") || path.startsWith("/volumes/")) {
      volumes(ex, method, path);
      return;
    }
    if (templateApi != null && templateApi.route(ex, ApiHandler::readJson)) {
      return;
    }
    if (path.equals("/snapshots") && method.equals("GET")) {
      listSnapshots(ex);
      return;
    }
    if (path.startsWith("/templates/aliases/") && method.equals("GET")) {
      templateAlias(ex, URLDecoder.decode(path.substring("/templates/aliases/".length()), StandardCharsets.UTF_8));
      return;
    }
    if (path.startsWith("/templates/") && method.equals("DELETE")) {
      String templateId = URLDecoder.decode(path.substring("/templates/".length()), StandardCharsets.UTF_8);
      if (!registry.templates().delete(templateId, registry.list())) {
        throw new RpcError("not_found", "template '" + templateId + "' not found");
      }
      registry.sweepForkImages(); // a snapshot of a fork held that fork's image
      ex.empty(204);
      return;
    }
    Matcher m = SANDBOX_PATH.matcher(path);
    if (m.matches() && !path.equals("/sandboxes/metrics")) {
      String id = m.group(1);
      String action = m.group(2);
      boolean v2 = path.startsWith("/v2/");
      if (action == null && !v2) {
        switch (method) {
          case "GET" -> ex.json(200, detail(find(id)));
          case "DELETE" -> {
            if (!registry.kill(id, "killed by a request (DELETE) at " + java.time.Instant.now())) {
              throw notFound(id);
            }
            ex.empty(204);
          }
          default -> error(ex, 405, "method " + method + " is not allowed on " + path);
        }
        return;
      }
      if ("POST".equals(method) && "connect".equals(action)) {
        connect(ex, id, v2);
        return;
      }
      if ("PUT".equals(method) && !v2 && "network".equals(action)) {
        updateNetwork(ex, find(id));
        return;
      }
      if ("GET".equals(method) && !v2 && "metrics".equals(action)) {
        ex.json(200, metrics(ex, find(id)));
        return;
      }
      if ("GET".equals(method) && v2 && "logs".equals(action)) {
        ex.json(200, logs(ex, find(id)));
        return;
      }
      if ("POST".equals(method) && !v2 && "snapshots".equals(action)) {
        JsonNode body = readJson(ex);
        Templates.Snapshot snap = registry.templates().snapshot(find(id), Json.text(body, "name"), registry.list());
        ex.json(201, snapshotJson(snap));
        return;
      }
      if ("POST".equals(method) && !v2 && "fork".equals(action)) {
        fork(ex, id);
        return;
      }
      if ("POST".equals(method) && !v2 && "pause".equals(action)) {
        JsonNode body = readJson(ex);
        boolean memory = !body.has("memory") || body.get("memory").asBoolean(true);
        if (!registry.pause(find(id), memory)) {
          throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already paused");
        }
        ex.empty(204);
        return;
      }
      if ("POST".equals(method) && !v2 && "resume".equals(action)) {
        JsonNode body = readJson(ex);
        long seconds = requireSeconds(body, "timeout", 15L);
        LocalSandbox s = find(id);
        if (!s.paused()) {
          throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already running");
        }
        registry.resume(s, Duration.ofSeconds(seconds));
        ex.json(201, sandboxJson(s));
        return;
      }
      if ("POST".equals(method) && !v2 && "timeout".equals(action)) {
        JsonNode body = readJson(ex);
        long seconds = requireSeconds(body, "timeout", null);
        registry.setTimeout(find(id), Duration.ofSeconds(seconds), false);
        ex.empty(204);
        return;
      }
      if ("POST".equals(method) && !v2 && "refreshes".equals(action)) {
        JsonNode body = readJson(ex);
        long seconds = body.has("duration") ? requireSeconds(body, "duration", null) : 0;
        if (seconds > 3600) {
          throw new RpcError("invalid_argument", "duration must be between 0 and 3600 seconds");
        }
        registry.setTimeout(find(id), Duration.ofSeconds(seconds), true);
        ex.empty(204);
        return;
      }
    }
    error(ex, 501, "not implemented by the local runtime: " + method + " " + path);
  }

  /**
   * E2B's alias lookup ({@code Template.exists} in the SDKs): {@code base} is public; a snapshot is
   * found by its name or its id and belongs to the team. Built templates are not served here.
   */
  private void templateAlias(Exchange ex, String alias) throws RpcError {
    if (alias.isEmpty() || alias.contains("/")) {
      throw new RpcError("invalid_argument", "invalid template alias '" + alias + "'");
    }
    if (alias.equals(Templates.BASE)) {
      ex.json(200, Json.object().put("templateID", Templates.BASE).put("public", true));
      return;
    }
    Templates.Snapshot snap = registry.templates().find(alias)
        .orElseThrow(() -> new RpcError("not_found", "template alias '" + alias + "' not found"));
    ex.json(200, Json.object().put("templateID", snap.snapshotId()).put("public", false));
  }

  private LocalSandbox find(String id) throws RpcError {
    return registry.find(id).orElseThrow(() -> notFound(id));
  }

  private RpcError notFound(String id) {
    String message = "Sandbox \"" + id + "\" doesn't exist or you don't have access to it";
    return new RpcError("not_found", registry.endedFromOutside(id).map(why -> message + "; it ended: " + why)
        .or(() -> registry.stoppedReason(id).map(r -> message + ": " + r)).orElse(message));
  }

  private static JsonNode readJson(Exchange ex) throws RpcError, IOException {
    byte[] raw = ex.bodyBytes();
    try {
      JsonNode node = Json.parse(raw);
      if (!node.isObject()) {
        throw new RpcError("invalid_argument", "request body must be a JSON object");
      }
      return node;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new RpcError("invalid_argument", "request body is not valid JSON: " + e.getOriginalMessage());
    }
  }

  private static long requireSeconds(JsonNode body, String field, Long fallback) throws RpcError {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (fallback != null) {
        return fallback;
      }
      throw new RpcError("invalid_argument", "'" + field + "' is required");
    }
    if (!v.canConvertToLong() || v.asLong() < 0) {
      throw new RpcError("invalid_argument", "'" + field + "' must be a non-negative number of seconds");
    }
    long s = v.asLong();
    if (s > MAX_TIMEOUT.toSeconds()) {
      throw new RpcError("invalid_argument", "Timeout cannot be greater than " + MAX_TIMEOUT.toHours() + " hours");
    }
    return s;
  }

  private static Map<String, String> stringMap(JsonNode body, String field) throws RpcError {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return Map.of();
    }
    if (!v.isObject()) {
      throw new RpcError("invalid_argument", "'" + field + "' must be an object of strings");
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : v.properties()) {
      if (!e.getValue().isValueNode() || e.getValue().isNull()) {
        throw new RpcError("invalid_argument", "'" + field + "." + e.getKey() + "' must be a string");
      }
      out.put(e.getKey(), e.getValue().asText());
    }
    return out;
  }

  private void create(Exchange ex, boolean v2) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    String template = Json.text(body, "templateID");
    if (template == null || template.isBlank()) {
      throw new RpcError("invalid_argument", "'templateID' is required");
    }
    long timeout = requireSeconds(body, "timeout", v2 ? 300L : 15L);
    boolean autoPause = body.path("autoPause").asBoolean(false);
    boolean autoPauseMemory = body.path("autoPauseMemory").asBoolean(true);
    boolean autoResume = body.path("autoResume").path("enabled").asBoolean(false);
    if (autoResume && !autoPause) {
      throw new RpcError("invalid_argument", "autoResume is only valid when the sandbox pauses at its timeout (autoPause)");
    }
    if (autoResume && !autoPauseMemory) {
      throw new RpcError("invalid_argument", "autoPauseMemory:false cannot be combined with autoResume");
    }
    List<LocalSandbox.VolumeMount> mounts = volumeMounts(body.get("volumeMounts"));
    JsonNode networkBody = body.get("network");
    ObjectNode network = networkBody == null || networkBody.isNull() ? null : parseNetwork(networkBody);
    Boolean internet = body.has("allow_internet_access") ? body.get("allow_internet_access").asBoolean() : null;
    refuseUnenforceable(network, internet);
    if (registry.templates().resolve(template) == null) {
      throw new RpcError("not_found", "template '" + template + "' not found");
    }
    Map<String, String> envVars = stringMap(body, "envVars");
    io.sandboxes.local.internal.TemplateBuilds builds = templateBuilds;
    java.util.Optional<io.sandboxes.local.internal.TemplateBuilds.Defaults> defaults =
        builds == null ? java.util.Optional.empty() : builds.defaults(template);
    if (defaults.isPresent()) {
      // a built template's ENV steps are its sandboxes' environment; the create's own envVars win
      Map<String, String> merged = new LinkedHashMap<>(defaults.get().env());
      merged.putAll(envVars);
      envVars = merged;
    }
    LocalSandbox s = registry.create(template, Duration.ofSeconds(timeout), stringMap(body, "metadata"), envVars,
        new LocalSandbox.Lifecycle(autoPause, autoPauseMemory, autoResume, timeout), mounts);
    Boolean applied = internet != null ? internet : internetByDefault ? Boolean.TRUE : null;
    if (network != null || applied != null) {
      registry.setNetwork(s, network == null ? Json.object() : network, applied);
    }
    if (defaults.isPresent() && builds != null) {
      try {
        builds.startCommands(s, defaults.get());
      } catch (RpcError e) {
        registry.kill(s.id()); // a sandbox whose template's start or ready command failed is not handed out
        throw e;
      }
    }
    String egress = egressNote(network, internet, applied);
    s.log("info", "egress: " + egress);
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.egress").addKeyValue("sandbox", s.id()).addKeyValue("egress", egress)
        .log("sandbox egress");
    ex.json(201, sandboxJson(s));
  }

  /** Says which egress applies to a new sandbox, and why: what it asked for, or which default. */
  private String egressNote(ObjectNode network, Boolean asked, Boolean applied) {
    if (!registry.egressEnforced()) {
      return "no network at all: this server cannot enforce egress (it needs root on the Docker host, nsenter and iptables)";
    }
    boolean allowList = network != null && network.has("allowOut") && !network.get("allowOut").isEmpty();
    if (asked != null) {
      return asked ? "open (allow_internet_access: true, as asked), less denyOut"
          : allowList ? "only network.allowOut (allow_internet_access: false, as asked)" : "nothing reachable (allow_internet_access: false, as asked)";
    }
    if (Boolean.TRUE.equals(applied)) {
      return "open, less denyOut: allow_internet_access was not given, and this server applies E2B's default (open unless told otherwise)";
    }
    return (allowList ? "only network.allowOut" : "nothing reachable")
        + ": allow_internet_access was not given, and this server's default is deny (E2B's is open; see --internet-by-default)";
  }

  /**
   * {@code POST /sandboxes/{id}/fork}: {@code count} (default 1, at most 100) new sandboxes from
   * the parent's filesystem, each living {@code timeout} seconds (default 15, as E2B's). The
   * answer is 201 with one entry per fork, {@code {sandbox}} or {@code {error: {code, message}}};
   * any other status means no fork was attempted.
   */
  private void fork(Exchange ex, String id) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    long timeout = 15;
    JsonNode t = body.get("timeout");
    if (t != null && !t.isNull()) {
      if (!t.isIntegralNumber()) {
        throw new RpcError("invalid_argument", "'timeout' must be a whole number of seconds");
      }
      if (t.bigIntegerValue().signum() <= 0) {
        throw new RpcError("invalid_argument", "Timeout must be greater than 0");
      }
      if (!t.canConvertToLong() || t.asLong() > MAX_TIMEOUT.toSeconds()) {
        throw new RpcError("invalid_argument", "Timeout cannot be greater than " + MAX_TIMEOUT.toHours() + " hours");
      }
      timeout = t.asLong();
    }
    int count = 1;
    JsonNode c = body.get("count");
    if (c != null && !c.isNull()) {
      if (!c.isIntegralNumber()) {
        throw new RpcError("invalid_argument", "'count' must be a whole number");
      }
      if (c.bigIntegerValue().signum() <= 0) {
        throw new RpcError("invalid_argument", "Count must be at least 1");
      }
      if (!c.canConvertToInt() || c.asInt() > Registry.MAX_FORKS) {
        throw new RpcError("invalid_argument", "Count cannot be greater than " + Registry.MAX_FORKS);
      }
      count = c.asInt();
    }
    ArrayNode out = Json.array();
    for (Registry.ForkOutcome o : registry.fork(find(id), count, Duration.ofSeconds(timeout))) {
      if (o.sandbox() != null) {
        out.addObject().set("sandbox", sandboxJson(o.sandbox()));
      } else {
        RpcError e = java.util.Objects.requireNonNull(o.error());
        out.addObject().putObject("error").put("code", Connect.httpStatus(e.code())).put("message", e.getMessage());
      }
    }
    ex.json(201, out);
  }

  private List<LocalSandbox.VolumeMount> volumeMounts(JsonNode mounts) throws RpcError {
    List<LocalSandbox.VolumeMount> out = new ArrayList<>();
    if (mounts == null || mounts.isNull()) {
      return out;
    }
    if (!mounts.isArray()) {
      throw new RpcError("invalid_argument", "'volumeMounts' must be a list of {name, path}");
    }
    java.util.Set<String> paths = new java.util.HashSet<>();
    for (JsonNode m : mounts) {
      String name = Json.text(m, "name");
      String path = Json.text(m, "path");
      if (name == null || path == null) {
        throw new RpcError("invalid_argument", "each volume mount needs a name and a path");
      }
      if (!path.startsWith("/") || path.equals("/") || path.contains("..") || !paths.add(path)) {
        throw new RpcError("invalid_argument", "volume mount path must be a distinct absolute path other than /, got '" + path + "'");
      }
      Volumes.Volume v = volumes.byName(name).orElseThrow(() -> new RpcError("not_found", "volume '" + name + "' not found"));
      out.add(new LocalSandbox.VolumeMount(v.volumeId(), v.name(), path));
    }
    return out;
  }

  private void connect(Exchange ex, String id, boolean v2) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    long timeout = requireSeconds(body, "timeout", v2 ? 300L : null);
    if (body.has("memory") && !body.get("memory").asBoolean(true)) {
      throw new RpcError("invalid_argument", "a cold reboot (memory:false) on resume is not supported by the local runtime");
    }
    LocalSandbox s = find(id);
    boolean resumed = registry.resume(s, Duration.ofSeconds(timeout));
    ex.json(resumed ? 201 : 200, sandboxJson(s));
  }

  private static final Pattern CIDR = Pattern.compile(
      "^((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)(/(3[0-2]|[12]?\\d))?$");
  private static final Pattern DOMAIN = Pattern.compile("^(\\*\\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$");

  /**
   * Stores a sandbox's network policy, as E2B's {@code SandboxNetworkUpdateConfig} (a full
   * replace). The local runtime's sandboxes have no network at all, so every policy is
   * enforced as "nothing reachable" until the egress gateway exists; the policy is stored and
   * reported so that callers see what they asked for.
   */
  private void updateNetwork(Exchange ex, LocalSandbox s) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    ObjectNode network = parseNetwork(body);
    // whether port traffic needs the traffic token is fixed at create, as on E2B: an update keeps it
    network.remove(ALLOW_PUBLIC_TRAFFIC);
    ObjectNode before = s.network();
    if (before != null && before.has(ALLOW_PUBLIC_TRAFFIC)) {
      network.set(ALLOW_PUBLIC_TRAFFIC, before.get(ALLOW_PUBLIC_TRAFFIC));
    }
    if (s.paused()) {
      throw new RpcError("already_exists", "sandbox " + s.id() + " is paused; resume it to change its network");
    }
    Boolean internet = body.has("allow_internet_access") ? body.get("allow_internet_access").asBoolean() : null;
    refuseUnenforceable(network, internet);
    registry.setNetwork(s, network, internet);
    ex.empty(204);
  }

  /**
   * Where egress cannot be enforced, sandboxes have no network at all; a policy that would allow
   * something is refused rather than stored and silently not honoured. (E2B's SDK 2.45 sends
   * {@code allow_internet_access: true} by default; that one is accepted and reported as what it
   * is here: no network.)
   */
  private void refuseUnenforceable(ObjectNode network, Boolean internet) throws RpcError {
    if (registry.egressEnforced()) {
      return;
    }
    boolean allows = network != null && network.has("allowOut") && !network.get("allowOut").isEmpty();
    if (allows) {
      throw new RpcError("unimplemented", "this local runtime cannot enforce an allow-list (egress needs the server to run as root"
          + " on the Docker host, with nsenter and iptables); its sandboxes have no network at all");
    }
  }

  /** The network field that makes a sandbox's ports need its traffic token when false. */
  static final String ALLOW_PUBLIC_TRAFFIC = "allowPublicTraffic";

  private static ObjectNode parseNetwork(JsonNode body) throws RpcError {
    ObjectNode network = Json.object();
    JsonNode pub = body.get(ALLOW_PUBLIC_TRAFFIC);
    if (pub != null && !pub.isNull()) {
      if (!pub.isBoolean()) {
        throw new RpcError("invalid_argument", "'" + ALLOW_PUBLIC_TRAFFIC + "' must be true or false");
      }
      network.put(ALLOW_PUBLIC_TRAFFIC, pub.asBoolean());
    }
    for (String field : List.of("allowOut", "denyOut")) {
      JsonNode list = body.get(field);
      if (list == null || list.isNull()) {
        continue;
      }
      if (!list.isArray()) {
        throw new RpcError("invalid_argument", "'" + field + "' must be a list");
      }
      ArrayNode copy = network.putArray(field);
      for (JsonNode e : list) {
        String v = e.asText("");
        boolean ok = CIDR.matcher(v).matches() || (field.equals("allowOut") && DOMAIN.matcher(v).matches());
        if (!ok) {
          throw new RpcError("invalid_argument", "'" + v + "' is not a valid " + (field.equals("allowOut") ? "domain, IP or CIDR" : "IP or CIDR"));
        }
        copy.add(v);
      }
    }
    for (String field : List.of("rules", "egressProxy")) {
      JsonNode v = body.get(field);
      if (v != null && !v.isNull() && !(v.isContainerNode() && v.isEmpty())) {
        throw new RpcError("invalid_argument", "'" + field + "' is not supported by the local runtime");
      }
    }
    return network;
  }

  /** E2B's metrics range: Unix seconds, both ends included; by default the sandbox's whole life so far. */
  private ArrayNode metrics(Exchange ex, LocalSandbox s) throws RpcError {
    long start = seconds(ex.query("start"), "start", s.startedAt().getEpochSecond());
    // no end: up to the present, a sample taken for this answer included
    long end = seconds(ex.query("end"), "end", Long.MAX_VALUE);
    if (start > end) {
      throw new RpcError("invalid_argument", "start (" + start + ") must not be after end (" + end + ")");
    }
    ArrayNode out = Json.array();
    for (io.sandboxes.local.internal.Metrics.Sample m : registry.metrics(s, start, end)) {
      out.addObject()
          .put("timestamp", m.at().toString())
          .put("timestampUnix", m.at().getEpochSecond())
          .put("cpuCount", s.cpuCount())
          .put("cpuUsedPct", m.cpuUsedPct())
          .put("memUsed", m.memUsed())
          .put("memTotal", m.memTotal())
          .put("memCache", m.memCache())
          .put("diskUsed", m.diskUsed())
          .put("diskTotal", m.diskTotal());
    }
    return out;
  }

  private static long seconds(String raw, String field, long fallback) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return fallback;
    }
    try {
      long v = Long.parseLong(raw);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "'" + field + "' must be a non-negative Unix time in seconds, got '" + raw + "'");
  }

  private static ObjectNode logs(Exchange ex, LocalSandbox s) throws RpcError {
    int limit = 1000;
    String raw = ex.query("limit");
    if (raw != null) {
      try {
        limit = Integer.parseInt(raw);
      } catch (NumberFormatException e) {
        throw new RpcError("invalid_argument", "limit must be a number from 1 to 1000");
      }
      if (limit < 1 || limit > 1000) {
        throw new RpcError("invalid_argument", "limit must be a number from 1 to 1000");
      }
    }
    String cursor = ex.query("cursor");
    long from = 0;
    if (cursor != null && !cursor.isEmpty()) {
      try {
        from = Long.parseLong(cursor);
      } catch (NumberFormatException e) {
        throw new RpcError("invalid_argument", "cursor must be Unix milliseconds");
      }
    }
    boolean backward = "backward".equals(ex.query("direction"));
    String level = ex.query("level");
    String search = ex.query("search");
    List<LocalSandbox.LogLine> lines = new ArrayList<>(s.logLines());
    if (backward) {
      java.util.Collections.reverse(lines);
    }
    ObjectNode out = Json.object();
    ArrayNode logs = out.putArray("logs");
    for (LocalSandbox.LogLine l : lines) {
      long ms = l.timestamp().toEpochMilli();
      if (cursor != null && !cursor.isEmpty() && (backward ? ms > from : ms < from)) {
        continue;
      }
      if (level != null && !level.isEmpty() && !level.equals(l.level())) {
        continue;
      }
      if (search != null && !search.isEmpty() && !l.message().contains(search)) {
        continue;
      }
      if (logs.size() >= limit) {
        break;
      }
      logs.addObject().put("timestamp", l.timestamp().toString()).put("level", l.level()).put("message", l.message())
          .putObject("fields");
    }
    return out;
  }

  private static ObjectNode snapshotJson(Templates.Snapshot snap) {
    ObjectNode n = Json.object().put("snapshotID", snap.snapshotId());
    n.putArray("names").add(snap.snapshotId());
    return n;
  }

  private void listSnapshots(Exchange ex) throws RpcError {
    String sandboxId = ex.query("sandboxID");
    String name = ex.query("name");
    int limit = parseLimit(ex.query("limit"));
    List<Templates.Snapshot> rows = new ArrayList<>();
    for (Templates.Snapshot s : registry.templates().list()) {
      if (sandboxId != null && !sandboxId.isEmpty() && !sandboxId.equals(s.sourceSandboxId())) {
        continue;
      }
      if (name != null && !name.isEmpty() && !s.name().equals(name) && !s.snapshotId().equals(name)
          && !s.snapshotId().equals(name + ":default")) {
        continue;
      }
      rows.add(s);
    }
    int from = 0;
    String token = ex.query("nextToken");
    if (token != null && !token.isEmpty()) {
      try {
        from = Integer.parseInt(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new RpcError("invalid_argument", "invalid nextToken");
      }
    }
    from = Math.min(Math.max(from, 0), rows.size());
    int to = Math.min(rows.size(), from + limit);
    ArrayNode out = Json.array();
    rows.subList(from, to).forEach(s -> out.add(snapshotJson(s)));
    if (to < rows.size()) {
      ex.response.getHeaders().put("X-Next-Token",
          Base64.getUrlEncoder().withoutPadding().encodeToString(Integer.toString(to).getBytes(StandardCharsets.UTF_8)));
    }
    ex.json(200, out);
  }

  private static int parseLimit(String raw) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return 100;
    }
    try {
      int limit = Integer.parseInt(raw);
      if (limit >= 1 && limit <= 100) {
        return limit;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new RpcError("invalid_argument", "limit must be a number from 1 to 100");
  }

  private void volumes(Exchange ex, String method, String path) throws RpcError, IOException {
    if (path.equals("/volumes")) {
      switch (method) {
        case "GET" -> {
          ArrayNode out = Json.array();
          volumes.list().forEach(v -> out.addObject().put("volumeID", v.volumeId()).put("name", v.name()));
          ex.json(200, out);
        }
        case "POST" -> {
          JsonNode body = readJson(ex);
          Volumes.Volume v = volumes.create(Json.text(body, "name"));
          ex.json(201, Json.object().put("volumeID", v.volumeId()).put("name", v.name()).put("token", v.token()));
        }
        default -> error(ex, 405, "method " + method + " is not allowed on /volumes");
      }
      return;
    }
    String volumeId = path.substring("/volumes/".length());
    switch (method) {
      case "GET" -> {
        Volumes.Volume v = volumes.byId(volumeId).orElseThrow(() -> new RpcError("not_found", "volume '" + volumeId + "' not found"));
        ex.json(200, Json.object().put("volumeID", v.volumeId()).put("name", v.name()).put("token", v.token()));
      }
      case "DELETE" -> {
        if (!volumes.delete(volumeId, registry.list())) {
          throw new RpcError("not_found", "volume '" + volumeId + "' not found");
        }
        ex.empty(204);
      }
      default -> error(ex, 405, "method " + method + " is not allowed on " + path);
    }
  }

  static ObjectNode sandboxJson(LocalSandbox s) {
    ObjectNode n = Json.object()
        .put("templateID", s.templateId())
        .put("sandboxID", s.id())
        .put("clientID", "local")
        .put("alias", s.templateId())
        .put("envdVersion", Registry.ENVD_VERSION)
        .put("envdAccessToken", s.envdToken());
    String traffic = s.trafficAccessToken();
    if (traffic == null) {
      n.putNull("trafficAccessToken");
    } else {
      n.put("trafficAccessToken", traffic);
    }
    n.putNull("domain");
    return n;
  }

  private static ObjectNode listed(LocalSandbox s) {
    ObjectNode n = Json.object()
        .put("templateID", s.templateId())
        .put("sandboxID", s.id())
        .put("clientID", "local")
        .put("alias", s.templateId())
        .put("startedAt", s.startedAt().toString())
        .put("endAt", s.endAt().toString())
        .put("cpuCount", s.cpuCount())
        .put("memoryMB", s.memoryMB())
        .put("diskSizeMB", s.diskSizeMB())
        .put("state", s.paused() ? "paused" : "running")
        .put("envdVersion", Registry.ENVD_VERSION);
    n.set("metadata", Json.toObject(s.metadata()));
    ArrayNode vm = n.putArray("volumeMounts");
    s.volumeMounts().forEach(m -> vm.addObject().put("name", m.name()).put("path", m.path()));
    return n;
  }

  static ObjectNode detail(LocalSandbox s) {
    ObjectNode n = listed(s);
    n.put("envdAccessToken", s.envdToken());
    n.putNull("domain");
    if (s.allowInternetAccess() != null) {
      n.put("allowInternetAccess", s.allowInternetAccess());
    } else {
      n.putNull("allowInternetAccess");
    }
    if (s.network() != null) {
      n.set("network", s.network());
    }
    n.putObject("lifecycle").put("autoResume", s.lifecycle().autoResume())
        .put("onTimeout", s.lifecycle().pauseOnTimeout() ? "pause" : "kill");
    return n;
  }

  private void list(Exchange ex, boolean v2) throws RpcError {
    Map<String, String> filter = parseMetadataFilter(ex.query("metadata"));
    boolean wantRunning = true;
    boolean wantPaused = v2;
    if (v2) {
      String state = ex.query("state");
      if (state != null && !state.isBlank()) {
        List<String> states = List.of(state.split(","));
        for (String st : states) {
          if (!st.equals("running") && !st.equals("paused")) {
            throw new RpcError("invalid_argument", "unknown state '" + st + "'");
          }
        }
        wantRunning = states.contains("running");
        wantPaused = states.contains("paused");
      }
    }
    int limit = v2 ? parseLimit(ex.query("limit")) : 100;
    boolean ascending = v2 && ascending(ex.query("order"));
    java.time.Instant startedAfter = v2 ? parseInstant(ex.query("startedAfter"), "startedAfter") : null;
    String template = v2 ? ex.query("template") : null;
    List<LocalSandbox> rows = new ArrayList<>();
    for (LocalSandbox s : registry.list()) {
      boolean stateMatches = s.paused() ? wantPaused : wantRunning;
      if (stateMatches && s.metadata().entrySet().containsAll(filter.entrySet())
          && (startedAfter == null || !s.startedAt().isBefore(startedAfter))
          && (template == null || template.isEmpty() || sameTemplate(s.templateId(), template))) {
        rows.add(s);
      }
    }
    // the order applies to the whole result, before paging; the token is a position in that order
    rows.sort(java.util.Comparator.comparing(s -> cursorOf(s, ascending)));
    int from = 0;
    String token = v2 ? ex.query("nextToken") : null;
    if (token != null && !token.isEmpty()) {
      String cursor = decodeToken(token);
      if (!cursor.startsWith(ascending ? "a" : "d")) {
        throw new RpcError("invalid_argument", "nextToken belongs to a listing in the other order");
      }
      while (from < rows.size() && cursorOf(rows.get(from), ascending).compareTo(cursor) <= 0) {
        from++;
      }
    }
    int to = v2 ? Math.min(rows.size(), from + limit) : rows.size();
    ArrayNode out = Json.array();
    for (LocalSandbox s : rows.subList(from, to)) {
      out.add(listed(s));
    }
    if (to < rows.size()) {
      ex.response.getHeaders().put("X-Next-Token", Base64.getUrlEncoder().withoutPadding()
          .encodeToString(cursorOf(rows.get(to - 1), ascending).getBytes(StandardCharsets.UTF_8)));
    }
    ex.response.getHeaders().put("X-Total-Running", Long.toString(registry.list().stream().filter(x -> !x.paused()).count()));
    ex.json(200, out);
  }

  /** E2B's {@code OrderDirection}: {@code desc} (newest first, the default) or {@code asc}. */
  private static boolean ascending(String order) throws RpcError {
    if (order == null || order.isEmpty() || order.equals("desc")) {
      return false;
    }
    if (order.equals("asc")) {
      return true;
    }
    throw new RpcError("invalid_argument", "order must be 'asc' or 'desc', got '" + order + "'");
  }

  private static java.time.Instant parseInstant(String raw, String field) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(raw).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      throw new RpcError("invalid_argument", "'" + field + "' must be an RFC 3339 date-time, got '" + raw + "'");
    }
  }

  /** A template filter names a template by id or alias: {@code base}, or a snapshot as {@code name} or {@code name:default}. */
  private static boolean sameTemplate(String templateId, String wanted) {
    return canonicalTemplate(templateId).equals(canonicalTemplate(wanted));
  }

  private static String canonicalTemplate(String id) {
    return id.equals(Templates.BASE) || id.contains(":") ? id : id + ":default";
  }

  /**
   * A sandbox's place in the listing: its start time (descending for newest first, ascending for
   * {@code asc}), then its id. The page token is the last row's place.
   */
  private static String cursorOf(LocalSandbox s, boolean ascending) {
    long nanos = s.startedAt().getEpochSecond() * 1_000_000_000L + s.startedAt().getNano();
    return String.format("%s%020d__%s", ascending ? "a" : "d", ascending ? nanos : Long.MAX_VALUE - nanos, s.id());
  }

  private static String decodeToken(String token) throws RpcError {
    try {
      return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", "invalid nextToken");
    }
  }

  /**
   * The SDKs encode the filter in layers: each key and value, then the joined form string, then
   * the query parameter. Jetty has undone the last; this undoes the other two, as E2B's API does.
   */
  static Map<String, String> parseMetadataFilter(String raw) throws RpcError {
    if (raw == null || raw.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    try {
      String form = URLDecoder.decode(raw, StandardCharsets.UTF_8);
      for (String pair : form.split("&")) {
        String[] kv = pair.split("=", -1);
        if (kv.length != 2) {
          throw new RpcError("invalid_argument", "invalid metadata filter '" + raw + "'");
        }
        out.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8), URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
      }
    } catch (IllegalArgumentException e) {
      throw new RpcError("invalid_argument", "invalid metadata filter '" + raw + "'");
    }
    return out;
  }

}
