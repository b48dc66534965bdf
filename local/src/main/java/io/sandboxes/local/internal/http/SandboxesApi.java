package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.Bodies.MAX_TIMEOUT;
import static io.sandboxes.local.internal.http.Bodies.readJson;
import static io.sandboxes.local.internal.http.Bodies.requireSeconds;
import static io.sandboxes.local.internal.http.Bodies.stringMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Volumes;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandboxes resource: create (v1 and v2), get, kill, connect (v1 and v2), pause, resume,
 * timeout, refreshes and fork; listing is {@link SandboxListing}'s. Network, metrics and logs have
 * their own resources.
 */
final class SandboxesApi {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);
  /** A sandbox by id, v1 (the exact path {@code /sandboxes/metrics} is no sandbox). */
  private static final String ONE = "/sandboxes/(?!metrics\\z)([^/]+)";

  private final Registry registry;
  private final Lookup lookup;
  private final Volumes volumes;
  private final NetworkApi network;
  private final @Nullable TemplateBuilds builds;
  private final SandboxListing listing;

  SandboxesApi(Registry registry, Lookup lookup, Volumes volumes, NetworkApi network, @Nullable TemplateBuilds builds) {
    this.registry = registry;
    this.listing = new SandboxListing(registry);
    this.lookup = lookup;
    this.volumes = volumes;
    this.network = network;
    this.builds = builds;
  }

  void routes(RouteTable.Builder t) {
    t.on("POST", "/sandboxes", (ex, m) -> create(ex, false))
        .on("POST", "/v2/sandboxes", (ex, m) -> create(ex, true));
    listing.routes(t);
    t.any("(?:/v2)?/sandboxes", (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on " + ex.path()))
        .on("GET", ONE, (ex, m) -> Bodies.json(ex, 200, SandboxViews.detail(lookup.find(m.group(1)))))
        .on("DELETE", ONE, (ex, m) -> kill(ex, m.group(1)))
        .any(ONE, (ex, m) -> Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on " + ex.path()))
        .on("POST", "/sandboxes/([^/]+)/connect", (ex, m) -> connect(ex, m.group(1), false))
        .on("POST", "/v2/sandboxes/([^/]+)/connect", (ex, m) -> connect(ex, m.group(1), true))
        .on("POST", "/sandboxes/([^/]+)/fork", (ex, m) -> fork(ex, m.group(1)))
        .on("POST", "/sandboxes/([^/]+)/pause", (ex, m) -> pause(ex, m.group(1)))
        .on("POST", "/sandboxes/([^/]+)/resume", (ex, m) -> resume(ex, m.group(1)))
        .on("POST", "/sandboxes/([^/]+)/timeout", (ex, m) -> timeout(ex, m.group(1)))
        .on("POST", "/sandboxes/([^/]+)/refreshes", (ex, m) -> refresh(ex, m.group(1)));
  }

  private void kill(Exchange ex, String id) throws RpcError {
    if (!registry.kill(id, "killed by a request (DELETE) at " + java.time.Instant.now())) {
      throw lookup.notFound(id);
    }
    ex.empty(204);
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
    ObjectNode policy = networkBody == null || networkBody.isNull() ? null : NetworkApi.parse(networkBody);
    Boolean internet = body.has("allow_internet_access") ? body.get("allow_internet_access").asBoolean() : null;
    network.refuseUnenforceable(policy);
    if (registry.templates().resolve(template) == null) {
      throw new RpcError("not_found", "template '" + template + "' not found");
    }
    Map<String, String> envVars = stringMap(body, "envVars");
    TemplateBuilds builds = this.builds;
    Optional<TemplateBuilds.Defaults> defaults = builds == null ? Optional.empty() : builds.defaults(template);
    if (defaults.isPresent()) {
      // a built template's ENV steps are its sandboxes' environment; the create's own envVars win
      Map<String, String> merged = new LinkedHashMap<>(defaults.get().env());
      merged.putAll(envVars);
      envVars = merged;
    }
    LocalSandbox s = registry.create(template, Duration.ofSeconds(timeout), stringMap(body, "metadata"), envVars,
        new LocalSandbox.Lifecycle(autoPause, autoPauseMemory, autoResume, timeout), mounts);
    Boolean applied = network.applied(internet);
    if (policy != null || applied != null) {
      registry.setNetwork(s, policy == null ? Json.object() : policy, applied);
    }
    if (defaults.isPresent() && builds != null) {
      try {
        builds.startCommands(s, defaults.get());
      } catch (RpcError e) {
        registry.kill(s.id()); // a sandbox whose template's start or ready command failed is not handed out
        throw e;
      }
    }
    String egress = network.egressNote(policy, internet, applied);
    s.log("info", "egress: " + egress);
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.egress").addKeyValue("sandbox", s.id()).addKeyValue("egress", egress)
        .log("sandbox egress");
    Bodies.json(ex, 201, SandboxViews.created(s));
  }

  private List<LocalSandbox.VolumeMount> volumeMounts(@Nullable JsonNode mounts) throws RpcError {
    List<LocalSandbox.VolumeMount> out = new ArrayList<>();
    if (mounts == null || mounts.isNull()) {
      return out;
    }
    if (!mounts.isArray()) {
      throw new RpcError("invalid_argument", "'volumeMounts' must be a list of {name, path}");
    }
    Set<String> paths = new HashSet<>();
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
    LocalSandbox s = lookup.find(id);
    boolean resumed = registry.resume(s, Duration.ofSeconds(timeout));
    Bodies.json(ex, resumed ? 201 : 200, SandboxViews.created(s));
  }

  private void pause(Exchange ex, String id) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    boolean memory = !body.has("memory") || body.get("memory").asBoolean(true);
    if (!registry.pause(lookup.find(id), memory)) {
      throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already paused");
    }
    ex.empty(204);
  }

  private void resume(Exchange ex, String id) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    long seconds = requireSeconds(body, "timeout", 15L);
    LocalSandbox s = lookup.find(id);
    if (!s.paused()) {
      throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already running");
    }
    registry.resume(s, Duration.ofSeconds(seconds));
    Bodies.json(ex, 201, SandboxViews.created(s));
  }

  private void timeout(Exchange ex, String id) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    long seconds = requireSeconds(body, "timeout", null);
    registry.setTimeout(lookup.find(id), Duration.ofSeconds(seconds), false);
    ex.empty(204);
  }

  private void refresh(Exchange ex, String id) throws RpcError, IOException {
    JsonNode body = readJson(ex);
    long seconds = body.has("duration") ? requireSeconds(body, "duration", null) : 0;
    if (seconds > 3600) {
      throw new RpcError("invalid_argument", "duration must be between 0 and 3600 seconds");
    }
    registry.setTimeout(lookup.find(id), Duration.ofSeconds(seconds), true);
    ex.empty(204);
  }

  /** One fork's outcome: the new sandbox, or why this one failed. */
  record ForkEntry(SandboxViews.@Nullable Created sandbox, @Nullable ForkError error) {}

  /** A failed fork's status and message. */
  record ForkError(int code, String message) {}

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
    List<ForkEntry> out = new ArrayList<>();
    for (Registry.ForkOutcome o : registry.fork(lookup.find(id), count, Duration.ofSeconds(timeout))) {
      if (o.sandbox() != null) {
        out.add(new ForkEntry(SandboxViews.created(o.sandbox()), null));
      } else {
        RpcError e = java.util.Objects.requireNonNull(o.error());
        out.add(new ForkEntry(null, new ForkError(Connect.httpStatus(e.code()), e.getMessage())));
      }
    }
    Bodies.json(ex, 201, out);
  }
}
