package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.Bodies.MAX_TIMEOUT;
import static io.sandboxes.local.internal.http.Bodies.readJson;
import static io.sandboxes.local.internal.http.Bodies.seconds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.NetworkPolicy;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Volumes;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import java.io.IOException;
import java.math.BigInteger;
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

  /**
   * {@code POST /sandboxes} (v1 and v2). Its fields are checked in this order, the template's
   * existence between the network and the environment, so those that can be refused are bound
   * when checked ({@link RequestBody.Later}): the environment and metadata among them.
   */
  record CreateBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String templateID,
      @Refusal(SECONDS) RequestBody.@Nullable Later<Long> timeout,
      Lenient.@Nullable Flag autoPause, Lenient.@Nullable Flag autoPauseMemory,
      @JsonDeserialize(using = Lenient.Part.class) @Nullable AutoResume autoResume,
      @Refusal("'volumeMounts' must be a list of {name, path}") RequestBody.@Nullable Later<Lenient.Parts<MountBody>> volumeMounts,
      @JsonDeserialize(using = Lenient.Part.class) NetworkApi.@Nullable PolicyBody network,
      @JsonProperty("allow_internet_access") Lenient.@Nullable Flag internet,
      @Refusal(value = "'envVars' must be an object of strings", entry = "'envVars.%s' must be a string")
      RequestBody.@Nullable Later<Map<String, Lenient.Scalar>> envVars,
      @Refusal(value = "'metadata' must be an object of strings", entry = "'metadata.%s' must be a string")
      RequestBody.@Nullable Later<Map<String, Lenient.Scalar>> metadata,
      @Nullable JsonNode iam, @Nullable JsonNode mcp, @Nullable JsonNode secure) {}

  /** Whether a paused sandbox resumes on its own when reached. */
  record AutoResume(Lenient.@Nullable Flag enabled) {}

  /** A volume to mount; an entry that is no object has neither field. */
  record MountBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String name,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String path) {}

  private void create(Exchange ex, boolean v2) throws RpcError, IOException {
    CreateBody body = RequestBody.read(ex, CreateBody.class);
    String template = body.templateID();
    if (template == null || template.isBlank()) {
      throw new RpcError("invalid_argument", "'templateID' is required");
    }
    UnservedFields.create(body.iam(), body.mcp(), body.secure());
    long timeout = seconds(RequestBody.Later.of(body.timeout()), "timeout", v2 ? 300L : 15L);
    boolean autoPause = Lenient.Flag.or(body.autoPause(), false);
    boolean autoPauseMemory = Lenient.Flag.or(body.autoPauseMemory(), true);
    boolean autoResume = body.autoResume() != null && Lenient.Flag.or(body.autoResume().enabled(), false);
    if (autoResume && !autoPause) {
      throw new RpcError("invalid_argument", "autoResume is only valid when the sandbox pauses at its timeout (autoPause)");
    }
    if (autoResume && !autoPauseMemory) {
      throw new RpcError("invalid_argument", "autoPauseMemory:false cannot be combined with autoResume");
    }
    List<LocalSandbox.VolumeMount> mounts = volumeMounts(RequestBody.Later.of(body.volumeMounts()));
    NetworkApi.PolicyBody networkBody = body.network();
    NetworkPolicy policy = networkBody == null ? null : NetworkApi.parse(networkBody);
    Lenient.Flag asked = body.internet();
    Boolean internet = asked == null ? null : asked.or(false);
    network.refuseUnenforceable(policy);
    network.refuseUnreachableProxy(policy);
    if (registry.templates().resolve(template) == null) {
      throw new RpcError("not_found", "template '" + template + "' not found");
    }
    Map<String, String> envVars = Lenient.Scalar.texts(RequestBody.Later.of(body.envVars()));
    TemplateBuilds builds = this.builds;
    Optional<TemplateBuilds.Defaults> defaults = builds == null ? Optional.empty() : builds.defaults(template);
    if (defaults.isPresent()) {
      // a built template's ENV steps are its sandboxes' environment; the create's own envVars win
      Map<String, String> merged = new LinkedHashMap<>(defaults.get().env());
      merged.putAll(envVars);
      envVars = merged;
    }
    LocalSandbox s = registry.create(template, Duration.ofSeconds(timeout), Lenient.Scalar.texts(RequestBody.Later.of(body.metadata())), envVars,
        new LocalSandbox.Lifecycle(autoPause, autoPauseMemory, autoResume, timeout), mounts);
    Boolean applied = network.applied(internet);
    if (policy != null || applied != null) {
      registry.setNetwork(s, policy == null ? NetworkPolicy.NONE : policy, applied);
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

  private List<LocalSandbox.VolumeMount> volumeMounts(Lenient.@Nullable Parts<MountBody> mounts) throws RpcError {
    List<LocalSandbox.VolumeMount> out = new ArrayList<>();
    if (mounts == null) {
      return out;
    }
    Set<String> paths = new HashSet<>();
    for (MountBody m : mounts.values()) {
      String name = m.name();
      String path = m.path();
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

  /** The seconds a sandbox is given: connect, resume and timeout. */
  static final String SECONDS = "'timeout' must be a non-negative number of seconds";

  /** {@code POST /sandboxes/{id}/connect} (v1 and v2) and {@code /resume}: the new lifetime and how to resume. */
  record ResumeBody(@Refusal(SECONDS) @Nullable Long timeout, Lenient.@Nullable Flag memory) {}

  /** {@code POST /sandboxes/{id}/timeout}. */
  record TimeoutBody(@Refusal(SECONDS) @Nullable Long timeout) {}

  /** {@code POST /sandboxes/{id}/refreshes}. */
  record RefreshBody(@Refusal("'duration' must be a non-negative number of seconds") @Nullable Long duration) {}

  /** {@code POST /sandboxes/{id}/pause}: whether memory is kept (the default). */
  record PauseBody(Lenient.@Nullable Flag memory) {}

  /** {@code POST /sandboxes/{id}/fork}: whole numbers only, checked after binding. */
  record ForkBody(@Refusal("'timeout' must be a whole number of seconds") @Nullable BigInteger timeout,
      @Refusal("'count' must be a whole number") @Nullable BigInteger count) {}

  private void connect(Exchange ex, String id, boolean v2) throws RpcError, IOException {
    ResumeBody body = RequestBody.read(ex, ResumeBody.class);
    long timeout = seconds(body.timeout(), "timeout", v2 ? 300L : null);
    if (!Lenient.Flag.or(body.memory(), true)) {
      throw new RpcError("invalid_argument", "a cold reboot (memory:false) on resume is not supported by the local runtime");
    }
    LocalSandbox s = lookup.find(id);
    boolean resumed = registry.resume(s, Duration.ofSeconds(timeout));
    Bodies.json(ex, resumed ? 201 : 200, SandboxViews.created(s));
  }

  private void pause(Exchange ex, String id) throws RpcError, IOException {
    PauseBody body = RequestBody.read(ex, PauseBody.class);
    if (!registry.pause(lookup.find(id), Lenient.Flag.or(body.memory(), true))) {
      throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already paused");
    }
    ex.empty(204);
  }

  private void resume(Exchange ex, String id) throws RpcError, IOException {
    ResumeBody body = RequestBody.read(ex, ResumeBody.class);
    long seconds = seconds(body.timeout(), "timeout", 15L);
    LocalSandbox s = lookup.find(id);
    if (!s.paused()) {
      throw new RpcError("already_exists", "Sandbox \"" + id + "\" is already running");
    }
    registry.resume(s, Duration.ofSeconds(seconds));
    Bodies.json(ex, 201, SandboxViews.created(s));
  }

  private void timeout(Exchange ex, String id) throws RpcError, IOException {
    TimeoutBody body = RequestBody.read(ex, TimeoutBody.class);
    long seconds = seconds(body.timeout(), "timeout", null);
    registry.setTimeout(lookup.find(id), Duration.ofSeconds(seconds), false);
    ex.empty(204);
  }

  private void refresh(Exchange ex, String id) throws RpcError, IOException {
    JsonNode tree = readJson(ex);
    RefreshBody body = RequestBody.bind(tree, RefreshBody.class);
    // a duration given as null is refused as missing; an absent one refreshes by nothing
    long seconds = tree.has("duration") ? seconds(body.duration(), "duration", null) : 0;
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
    ForkBody body = RequestBody.read(ex, ForkBody.class);
    long timeout = 15;
    BigInteger t = body.timeout();
    if (t != null) {
      if (t.signum() <= 0) {
        throw new RpcError("invalid_argument", "Timeout must be greater than 0");
      }
      if (t.bitLength() > 63 || t.longValue() > MAX_TIMEOUT.toSeconds()) {
        throw new RpcError("invalid_argument", "Timeout cannot be greater than " + MAX_TIMEOUT.toHours() + " hours");
      }
      timeout = t.longValue();
    }
    int count = 1;
    BigInteger c = body.count();
    if (c != null) {
      if (c.signum() <= 0) {
        throw new RpcError("invalid_argument", "Count must be at least 1");
      }
      if (c.bitLength() > 31 || c.intValue() > Registry.MAX_FORKS) {
        throw new RpcError("invalid_argument", "Count cannot be greater than " + Registry.MAX_FORKS);
      }
      count = c.intValue();
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
