package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxState;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.PageGuard;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * E2B's API, call for call, typed: what the control plane answers is what comes back, with a
 * 404 as {@link SandboxNotFoundException} (or an empty result where E2B's SDKs return one) and
 * every other failure thrown with its status, typed where E2B's SDKs type it
 * ({@link io.sandboxes.SandboxAuthenticationException}, {@link io.sandboxes.SandboxRateLimitException},
 * {@link io.sandboxes.SandboxServiceBusyException}). A call answered 429 is retried as the
 * provider's {@link E2BSandboxProvider.Builder#retries retries} say. Obtained from
 * {@link E2BSandboxProvider#api()}, whose HTTP client it shares; {@link #withRequestTimeout} and
 * {@link #withRetries} give views with their own settings for some calls. Thread-safe.
 *
 * @since 0.1
 */
public final class E2BApi {
  private final E2BSandboxProvider provider;
  private final Http http;
  private final ControlPlane controlPlane;
  private final @Nullable URI sandboxUrl;
  private final String domain;

  E2BApi(E2BSandboxProvider provider, Http http, ControlPlane controlPlane, @Nullable URI sandboxUrl, String domain) {
    this.provider = provider;
    this.http = http;
    this.controlPlane = controlPlane;
    this.sandboxUrl = sandboxUrl;
    this.domain = domain;
  }

  private void ensureOpen() {
    provider.ensureOpen();
  }

  /**
   * This API with another request timeout, as E2B's per-call {@code requestTimeoutMs}: each HTTP
   * request made through the view (and through the sandboxes it creates or connects to, as with a
   * sandbox E2B's SDK made with that option) may take this long; a control-plane call's retries
   * after a 429 wait within it too. The provider's own timeout is untouched, and the view shares
   * its HTTP client: it needs no closing.
   *
   * {@snippet class=io.sandboxes.snippets.CoreSnippets region=per-call :
   * SandboxPage page = e2b.api().withRequestTimeout(Duration.ofSeconds(5)).list(SandboxQuery.all());
   * }
   *
   * @param requestTimeout how long one HTTP request may take; zero for no limit
   * @return a view of this API with that timeout
   * @throws IllegalArgumentException when the timeout is negative
   */
  public E2BApi withRequestTimeout(Duration requestTimeout) {
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    if (requestTimeout.isNegative()) {
      throw new IllegalArgumentException("requestTimeout must not be negative, got " + requestTimeout);
    }
    Http view = http.withRequestTimeout(requestTimeout);
    return new E2BApi(provider, view, controlPlane.with(view, controlPlane.retries()), sandboxUrl, domain);
  }

  /**
   * This API with another number of retries after HTTP 429, as E2B's per-call {@code retries}:
   * a control-plane call answered 429 with a {@code Retry-After} in seconds is sent again up to
   * this many times, within its request timeout. The provider's own setting is untouched.
   *
   * @param retries how many times to retry, 0 for never
   * @return a view of this API with that many retries
   * @throws IllegalArgumentException when {@code retries} is negative
   * @see E2BSandboxProvider.Builder#retries(int)
   */
  public E2BApi withRetries(int retries) {
    if (retries < 0) {
      throw new IllegalArgumentException("retries must not be negative, got " + retries);
    }
    return new E2BApi(provider, http, controlPlane.with(http, retries), sandboxUrl, domain);
  }

  /**
   * Returns how long one HTTP request made through this API may take.
   *
   * @return the request timeout; zero for no limit
   */
  public Duration requestTimeout() {
    return http.requestTimeout();
  }

  /**
   * Returns how many times a control-plane call answered 429 is sent again.
   *
   * @return the retries after a 429
   */
  public int retries() {
    return controlPlane.retries();
  }

  E2BSandboxProvider provider() {
    return provider;
  }

  private static long seconds(Duration d) {
    return E2BSandboxProvider.seconds(d);
  }

  private static void requirePositive(Duration d, String name) {
    E2BSandboxProvider.requirePositive(d, name);
  }

  /**
   * Creates a sandbox with the default spec.
   *
   * @return a new sandbox from the {@code base} template with the default timeout
   */
  public LiveSandbox create() {
    return create(SandboxSpec.defaults());
  }

  /**
   * Creates a sandbox and returns a handle to it once the control plane has answered.
   *
   * @param spec template, timeout, environment and metadata
   * @return the live sandbox; close it to kill it
   */
  public LiveSandbox create(SandboxSpec spec) {
    ensureOpen();
    ObjectNode body = Json.object()
        .put("templateID", spec.template())
        .put("timeout", seconds(spec.timeout()));
    if (spec.onTimeout() != io.sandboxes.OnTimeout.KILL) {
      body.put("autoPause", true);
      body.put("autoPauseMemory", spec.onTimeout() == io.sandboxes.OnTimeout.PAUSE);
    }
    if (spec.autoResume()) {
      body.putObject("autoResume").put("enabled", true);
    }
    body.set("metadata", Json.toObject(spec.metadata()));
    body.set("envVars", Json.toObject(spec.env()));
    if (!spec.volumes().isEmpty()) {
      com.fasterxml.jackson.databind.node.ArrayNode mounts = body.putArray("volumeMounts");
      spec.volumes().forEach(v -> mounts.addObject().put("name", v.volume()).put("path", v.path()));
    }
    if (spec.network() != null) {
      NetworkWire.putCreate(body, spec.network());
    }
    JsonNode sandbox = controlPlane.create(body);
    return handle(sandbox, "create sandbox");
  }

  /**
   * Connects to an existing sandbox at {@code POST /v2/sandboxes/{id}/connect}, as E2B's SDKs do.
   * A paused sandbox is resumed and ends {@code timeout} from now. A running sandbox's deadline
   * only moves later: to {@code timeout} from now when that is later, otherwise it stays (E2B's
   * control plane never shortens a deadline on connect; {@link #setTimeout} does).
   *
   * @param sandboxId the sandbox's id
   * @param timeout how long it should live from now at least, positive
   * @return a live handle to it
   * @throws SandboxNotFoundException when the server says there is no such sandbox
   */
  public LiveSandbox connect(String sandboxId, Duration timeout) {
    ensureOpen();
    requirePositive(timeout, "timeout");
    return handle(controlPlane.connect(sandboxId, seconds(timeout)), "connect to sandbox " + sandboxId);
  }

  /**
   * Connects to an existing sandbox as {@link #connect(String, Duration)}, saying how a paused one
   * resumes (E2B's {@code onResume}).
   *
   * @param sandboxId the sandbox's id
   * @param timeout how long it should live from now at least, positive
   * @param onResume {@link OnResume#RESTORE} to carry on from its memory, {@link OnResume#REBOOT}
   *     to boot it afresh from its filesystem (sent as {@code "memory": false})
   * @return a live handle to it
   * @throws SandboxNotFoundException when the server says there is no such sandbox
   * @throws io.sandboxes.SandboxApiException when the server refuses the resume asked for (the
   *     local runtime refuses {@code REBOOT} with 400); it never resumes another way instead
   */
  public LiveSandbox connect(String sandboxId, Duration timeout, OnResume onResume) {
    ensureOpen();
    requirePositive(timeout, "timeout");
    java.util.Objects.requireNonNull(onResume, "onResume");
    return handle(controlPlane.connect(sandboxId, seconds(timeout), onResume == OnResume.RESTORE),
        "connect to sandbox " + sandboxId);
  }

  /**
   * Connects to an existing sandbox with the default 5 minute timeout.
   *
   * @param sandboxId the sandbox's id
   * @return a live handle to it
   * @throws SandboxNotFoundException when the server says there is no such sandbox
   * @see #connect(String, Duration)
   */
  public LiveSandbox connect(String sandboxId) {
    return connect(sandboxId, SandboxSpec.DEFAULT_TIMEOUT);
  }

  /**
   * Looks a sandbox up and connects to it.
   *
   * @param sandboxId the sandbox's id
   * @return the handle, or empty when the server positively says the sandbox does not exist
   * @throws SandboxException for any other failure: a failure to look is never reported as absence
   */
  public Optional<LiveSandbox> get(String sandboxId) {
    try {
      return Optional.of(connect(sandboxId));
    } catch (SandboxNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * Reads what the control plane knows of a sandbox without connecting to it, so a paused
   * sandbox stays paused.
   *
   * @param sandboxId the sandbox's id
   * @return its record: state, template, metadata and times
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public SandboxInfo info(String sandboxId) {
    ensureOpen();
    return toInfo(controlPlane.info(sandboxId));
  }

  /**
   * Reads one page of the listing.
   *
   * @param query states, metadata pairs, start time, template, order, page size and the token of
   *     the page to read
   * @return the page, in the query's order, with the token of the next one when there is more
   * @throws SandboxException when the listing cannot be read; never an empty page instead
   */
  public SandboxPage list(SandboxQuery query) {
    ensureOpen();
    List<String> states = query.states().stream().map(s -> s.name().toLowerCase(java.util.Locale.ROOT)).sorted().toList();
    ControlPlane.Page page = controlPlane.list(states, query.metadata(), query.limit(), query.nextToken(),
        query.startedAfter() == null ? null : query.startedAfter().toString(), query.template(),
        query.order().name().toLowerCase(java.util.Locale.ROOT));
    List<SandboxInfo> items = new ArrayList<>(page.rows().size());
    for (JsonNode row : page.rows()) {
      // a row that names no sandbox cannot be acted on; E2B's SDKs drop such rows too
      if (Json.text(row, "sandboxID") != null) {
        items.add(toInfo(row));
      }
    }
    return new SandboxPage(items, page.nextToken());
  }

  /**
   * Reads every page of the listing, starting from the first whatever the query's token.
   *
   * @param query states, metadata pairs, start time, template, order and page size
   * @return the sandboxes of every page, in the query's order
   * @throws SandboxException when a page cannot be read, when the server hands out a next-page
   *     token twice (it is looping), or after 10,000 pages; never a partial list instead
   * @see #list(SandboxQuery)
   */
  public List<SandboxInfo> listAll(SandboxQuery query) {
    List<SandboxInfo> all = new ArrayList<>();
    SandboxQuery q = query.withNextToken(null);
    PageGuard guard = new PageGuard("list sandboxes");
    while (true) {
      SandboxPage page = list(q);
      all.addAll(page.items());
      if (!guard.next(page.hasNext() ? page.nextTokenValue() : null)) {
        return all;
      }
      q = q.withNextToken(page.nextTokenValue());
    }
  }

  /**
   * Kills a sandbox, running or paused.
   *
   * @param sandboxId the sandbox's id
   * @return true when it was killed, false when the server says it did not exist
   */
  public boolean kill(String sandboxId) {
    ensureOpen();
    return controlPlane.kill(sandboxId);
  }

  /**
   * Pauses a sandbox. A paused sandbox runs nothing and keeps no deadline; {@link #connect}
   * resumes it.
   *
   * @param sandboxId the sandbox's id
   * @param keepMemory true to keep memory and processes (they carry on after resume), false to
   *     keep only the filesystem
   * @return true when it is paused now, false when it already was
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public boolean pause(String sandboxId, boolean keepMemory) {
    ensureOpen();
    return controlPlane.pause(sandboxId, keepMemory);
  }

  /**
   * Replaces a sandbox's network policy.
   *
   * @param sandboxId the sandbox's id
   * @param allowOut domains ({@code *.} wildcards allowed), IPs and CIDRs that may be reached
   * @param denyOut IPs and CIDRs that may not; allow beats deny
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public void updateNetwork(String sandboxId, List<String> allowOut, List<String> denyOut) {
    ensureOpen();
    controlPlane.updateNetwork(sandboxId, List.copyOf(allowOut), List.copyOf(denyOut));
  }

  /**
   * Replaces a sandbox's network policy, as E2B's {@code Sandbox.updateNetwork(id, update)}: what
   * the update leaves out is cleared, as on E2B.
   *
   * @param sandboxId the sandbox's id
   * @param network allowOut, denyOut, rules and allowInternetAccess
   * @throws IllegalArgumentException when {@code network} sets allowPublicTraffic or
   *     maskRequestHost, which are fixed at create
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public void updateNetwork(String sandboxId, io.sandboxes.SandboxNetwork network) {
    ObjectNode body = NetworkWire.update(java.util.Objects.requireNonNull(network, "network"));
    ensureOpen();
    controlPlane.updateNetwork(sandboxId, body);
  }

  /**
   * Sets a sandbox to end {@code timeout} from now (it may shorten the current deadline).
   *
   * @param sandboxId the sandbox's id
   * @param timeout how long it lives from now, positive
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public void setTimeout(String sandboxId, Duration timeout) {
    ensureOpen();
    requirePositive(timeout, "timeout");
    controlPlane.setTimeout(sandboxId, seconds(timeout));
  }

  /**
   * Forks a running sandbox, as E2B's {@code Sandbox.fork(id, {count, timeoutMs})}: {@code count}
   * new sandboxes, each starting from the parent's state at this moment under its own id, then
   * diverging from the parent and from each other. The parent keeps running, its deadline
   * untouched. E2B's forks carry the parent's memory and running processes too; the local
   * runtime's carry its filesystem only (nothing runs in a fresh fork), and on both a fork keeps
   * the parent's template, metadata, environment variables, lifecycle, volume mounts and network
   * policy.
   *
   * @param sandboxId the parent's id
   * @param count how many forks, 1 to 100
   * @param timeout how long each fork lives from now, positive
   * @return one result per requested fork, in order: each a live sandbox or the error that kept
   *     that fork from starting; the forks that started are the caller's to close
   * @throws SandboxNotFoundException when there is no such sandbox (or it was killed)
   * @throws io.sandboxes.SandboxApiException when no fork was attempted (409: the parent is paused)
   */
  public List<ForkResult> fork(String sandboxId, int count, Duration timeout) {
    ensureOpen();
    if (count < 1 || count > 100) {
      throw new IllegalArgumentException("count must be between 1 and 100, got " + count);
    }
    requirePositive(timeout, "timeout");
    JsonNode answer = controlPlane.fork(sandboxId, count, seconds(timeout));
    List<ForkResult> out = new ArrayList<>(answer.size());
    for (JsonNode entry : answer) {
      JsonNode sandbox = entry.get("sandbox");
      if (sandbox != null && sandbox.isObject()) {
        out.add(new ForkResult(handle(sandbox, "fork sandbox " + sandboxId), null));
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

  /**
   * Reads a sandbox's resource-use samples between two moments, as E2B's
   * {@code Sandbox.getMetrics(id, {start, end})}: the control plane samples a running sandbox
   * every few seconds and answers those taken in the range, oldest first. The moments are sent as
   * Unix seconds, rounded to the nearest as E2B's SDK does, both ends included.
   *
   * @param sandboxId the sandbox's id
   * @param start the earliest sample wanted, or null for the sandbox's start
   * @param end the latest sample wanted, or null for now
   * @return the samples in the range, oldest first; empty when none was taken in it (a range
   *     before the sandbox existed, or one while it was paused)
   * @throws IllegalArgumentException when {@code start} is after {@code end}; nothing is sent
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public List<SandboxMetrics> metrics(String sandboxId, java.time.@Nullable Instant start, java.time.@Nullable Instant end) {
    ensureOpen();
    if (start != null && end != null && start.isAfter(end)) {
      throw new IllegalArgumentException("metrics range: start (" + start + ") is after end (" + end + ")");
    }
    JsonNode answer = controlPlane.metrics(sandboxId, unixSeconds(start), unixSeconds(end));
    List<SandboxMetrics> out = new ArrayList<>(answer.size());
    for (JsonNode m : answer) {
      try {
        java.time.Instant at = m.hasNonNull("timestampUnix")
            ? java.time.Instant.ofEpochSecond(m.get("timestampUnix").asLong())
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

  /** Unix seconds, rounded half up from the millisecond as E2B's SDK rounds. */
  private static @Nullable Long unixSeconds(java.time.@Nullable Instant at) {
    return at == null ? null : Math.floorDiv(at.toEpochMilli() + 500, 1000L);
  }

  /**
   * Tells whether a template alias exists, as E2B's {@code Template.exists}: {@code base}, a
   * snapshot by its name or id, or (on E2B) a built template.
   *
   * @param alias the alias to look up
   * @return true when it exists, also when it belongs to another team (the server answers 403);
   *     false when the server says it does not (404)
   * @throws io.sandboxes.SandboxApiException for any other answer: a failure to look is never
   *     reported as absence
   */
  public boolean templateExists(String alias) {
    ensureOpen();
    return controlPlane.templateAlias(requireAlias(alias)).status() != 404;
  }

  /**
   * Looks a template alias up and says what it names.
   *
   * @param alias the alias to look up: {@code base}, a snapshot's name or id, a built template's
   *     alias
   * @return what it names, or empty when the server says it does not exist (404)
   * @throws io.sandboxes.SandboxApiException with status 403 when it exists but belongs to another
   *     team, and for any other failure
   */
  public Optional<TemplateAlias> templateAlias(String alias) {
    ensureOpen();
    ControlPlane.AliasAnswer a = controlPlane.templateAlias(requireAlias(alias));
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

  private static String requireAlias(String alias) {
    Objects.requireNonNull(alias, "alias");
    if (alias.isBlank()) {
      throw new IllegalArgumentException("alias must not be blank");
    }
    return alias;
  }

  // ---- template builds ----

  /**
   * Template management: builds in the background and their status, names, tags.
   *
   * @return the template calls, sharing this API's client, timeout and retries
   */
  public E2BTemplates templates() {
    return new E2BTemplates(this, controlPlane, http);
  }

  /**
   * Volumes with their tokens and content, as E2B's {@code Volume}.
   *
   * @return the volumes of this API's account, sharing its HTTP client, timeout and retries
   * @since 0.1
   */
  public E2BVolumes volumes() { return new E2BVolumes(this, controlPlane, http); }

  /**
   * Secrets, as E2B's {@code Secret}.
   *
   * @return the secrets of this API's account, sharing its HTTP client, timeout and retries
   * @since 0.1
   */
  public E2BSecrets secrets() { return new E2BSecrets(this, controlPlane); }

  /**
   * Builds a template under a name through E2B's v2 build API, as E2B's {@code Template.build}:
   * each COPY's files are found and hashed, the build is requested ({@code POST /v3/templates}),
   * the files the server does not have yet are uploaded, the build is started, and its status is
   * read until it is {@code ready} or {@code error}, each log entry handed to
   * {@link io.sandboxes.template.BuildOptions#onLog} as it is read. Sandboxes are then created from it by its name.
   *
   * {@snippet :
   * BuildInfo built = e2b.buildTemplate(Template.fromTemplate("base").aptInstall("git"), "with-git",
   *     BuildOptions.defaults().onLog(line -> System.out.println(line.message())));
   * try (LiveSandbox s = e2b.create(SandboxSpec.of(built.name()))) { ... }
   * }
   *
   * @param template what to build
   * @param name the template's name (E2B's alias); building a name again rebuilds that template,
   *     keeping its id, and steps the server has cached are not run again
   * @param options resources, tags, cache, timeout and the log callback
   * @return the template's id, the build's id, its name and tags
   * @throws IllegalArgumentException when the name is blank, or a COPY source cannot be used
   *     (missing, or reached through a symbolic link out of the context directory); nothing is sent
   * @throws io.sandboxes.template.TemplateBuildException when the build ends in {@code error} (the
   *     server's reason, e.g. a RUN step's exit code, the step and the log so far) or does not end
   *     within the options' timeout
   * @throws io.sandboxes.SandboxApiException when the server refuses a request (e.g. 400 for a
   *     malformed name)
   */
  public io.sandboxes.template.BuildInfo buildTemplate(io.sandboxes.template.Template template, String name,
      io.sandboxes.template.BuildOptions options) {
    Objects.requireNonNull(template, "template");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(options, "options");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    ensureOpen();
    return new TemplateBuildCall(controlPlane, http, template, name, options).run();
  }

  /**
   * Builds a template under a name with the default options.
   *
   * @param template what to build
   * @param name the template's name
   * @return the template's id, the build's id, its name and tags
   * @see #buildTemplate(io.sandboxes.template.Template, String, io.sandboxes.template.BuildOptions)
   */
  public io.sandboxes.template.BuildInfo buildTemplate(io.sandboxes.template.Template template, String name) {
    return buildTemplate(template, name, io.sandboxes.template.BuildOptions.defaults());
  }

  // ---- volumes ----

  /**
   * Creates a named volume.
   *
   * @param name letters, digits, '_' and '-'
   * @return the new volume, with the id the server gave it
   * @throws io.sandboxes.SandboxApiException with status 409 when the name is taken
   */
  public VolumeInfo createVolume(String name) {
    ensureOpen();
    return toVolume(controlPlane.createVolume(Objects.requireNonNull(name, "name")));
  }

  /**
   * Lists the account's volumes.
   *
   * @return every volume of the account
   */
  public List<VolumeInfo> listVolumes() {
    ensureOpen();
    return controlPlane.listVolumes().stream().map(E2BApi::toVolume).toList();
  }

  /**
   * Looks a volume up by id.
   *
   * @param volumeId the volume's id (not its name)
   * @return the volume, or empty when the server positively says there is none
   */
  public Optional<VolumeInfo> getVolume(String volumeId) {
    ensureOpen();
    JsonNode v = controlPlane.getVolume(volumeId);
    return v == null ? Optional.empty() : Optional.of(toVolume(v));
  }

  /**
   * Deletes a volume and its data.
   *
   * @param volumeId the volume's id (not its name)
   * @return false when there was no such volume
   */
  public boolean deleteVolume(String volumeId) {
    ensureOpen();
    return controlPlane.deleteVolume(volumeId);
  }

  private static VolumeInfo toVolume(JsonNode v) {
    try {
      return new VolumeInfo(Json.requireText(v, "volumeID"), Json.requireText(v, "name"));
    } catch (RuntimeException e) {
      throw new SandboxException("a volume record of a shape this client cannot read: " + Json.abbreviate(v), e);
    }
  }

  // ---- snapshots ----

  /**
   * Captures a sandbox as a snapshot; the sandbox keeps running. The snapshot id is a template id.
   *
   * @param sandboxId the sandbox's id
   * @param name the snapshot's name, or null for a generated one; re-using a name replaces it
   * @return the snapshot's id and names
   * @throws SandboxNotFoundException when there is no such sandbox
   */
  public SnapshotInfo createSnapshot(String sandboxId, @Nullable String name) {
    ensureOpen();
    return toSnapshot(controlPlane.createSnapshot(sandboxId, name));
  }

  /**
   * Lists snapshots, every page.
   *
   * @param sandboxId only those taken of this sandbox, or null for all
   * @param name only those with this name, or null for all
   * @return the snapshots of every page
   * @throws SandboxException when a page cannot be read, when the server hands out a next-page
   *     token twice (it is looping), or after 10,000 pages
   */
  public List<SnapshotInfo> listSnapshots(@Nullable String sandboxId, @Nullable String name) {
    ensureOpen();
    List<SnapshotInfo> all = new ArrayList<>();
    String token = null;
    PageGuard guard = new PageGuard("list snapshots");
    do {
      ControlPlane.Page page = controlPlane.listSnapshots(sandboxId, name, SandboxQuery.MAX_LIMIT, token);
      page.rows().forEach(r -> all.add(toSnapshot(r)));
      token = page.nextToken();
    } while (guard.next(token));
    return all;
  }

  /**
   * Deletes a template: a snapshot, or a built template (by its id or name).
   *
   * @param templateId the template's id (or a built template's name)
   * @return false when there was no such template
   * @throws io.sandboxes.SandboxApiException with status 409 when a sandbox still uses it
   */
  public boolean deleteTemplate(String templateId) {
    ensureOpen();
    return controlPlane.deleteTemplate(templateId);
  }

  private static SnapshotInfo toSnapshot(JsonNode s) {
    try {
      List<String> names = new ArrayList<>();
      s.path("names").forEach(n -> names.add(n.asText()));
      return new SnapshotInfo(Json.requireText(s, "snapshotID"), names);
    } catch (RuntimeException e) {
      throw new SandboxException("a snapshot record of a shape this client cannot read: " + Json.abbreviate(s), e);
    }
  }


  private LiveSandbox handle(JsonNode sandbox, String context) {
    String id;
    try {
      id = Json.requireText(sandbox, "sandboxID");
    } catch (IllegalArgumentException e) {
      throw new SandboxException(context + ": the answer names no sandbox: " + Json.abbreviate(sandbox), e);
    }
    String token = Json.text(sandbox, "envdAccessToken");
    String sandboxDomain = Json.text(sandbox, "domain");
    String effectiveDomain = sandboxDomain == null || sandboxDomain.isBlank() ? domain : sandboxDomain;
    Envd envd = new Envd(http, envdUrl(sandboxUrl, id, effectiveDomain), id, token, (what, message) -> unreachable(id, what, message));
    return new LiveSandbox(this, id, Json.text(sandbox, "templateID"), Json.text(sandbox, "envdVersion"), envd, effectiveDomain);
  }

  /**
   * Explains a sandbox whose address answered 502: E2B's proxy says {@code "The sandbox was not
   * found"} for a killed sandbox and for a paused one alike (the local server says which), so the
   * control plane is asked. Paused is {@link io.sandboxes.SandboxPausedException}; gone is
   * {@link SandboxNotFoundException}; running (a proxy that lost its route for a moment) is a
   * plain {@link SandboxException}. When the control plane cannot be asked, the proxy's word
   * stands, with the failed look attached.
   */
  RuntimeException unreachable(String sandboxId, String what, String message) {
    SandboxInfo now;
    try {
      now = toInfo(controlPlane.info(sandboxId));
    } catch (SandboxNotFoundException gone) {
      return new SandboxNotFoundException(sandboxId, message + "; the control plane has no such sandbox either");
    } catch (RuntimeException couldNotLook) {
      SandboxNotFoundException e = new SandboxNotFoundException(sandboxId, message);
      e.addSuppressed(couldNotLook);
      return e;
    }
    if (now.state() == io.sandboxes.SandboxState.PAUSED) {
      return new io.sandboxes.SandboxPausedException(sandboxId, what);
    }
    return new SandboxException(what + ": the sandbox's address answered HTTP 502 (" + message
        + ") while the control plane says it is " + now.state().name().toLowerCase(java.util.Locale.ROOT) + "; try again");
  }

  /**
   * Where a sandbox's pre-signed file URLs point, as the official SDK's direct envd URL: the
   * configured sandbox URL when there is one, else the per-sandbox host
   * {@code https://49983-<id>.<domain>} (a bare URL carries no routing header, so the shared
   * {@code sandbox.<domain>} host cannot serve it).
   */
  URI directEnvdUrl(String sandboxId, String sandboxDomain) {
    if (sandboxUrl != null) {
      return sandboxUrl;
    }
    return URI.create("https://" + Envd.PORT + "-" + sandboxId + "." + sandboxDomain);
  }

  /**
   * The domains E2B runs itself, where (as in the official SDKs) every sandbox's daemon is reached
   * at one shared host, {@code sandbox.<domain>}, routed by the {@code E2b-Sandbox-Id} header.
   */
  static final java.util.Set<String> E2B_DOMAINS = java.util.Set.of("e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev");

  /**
   * Where a sandbox's daemon is reached: the configured sandbox URL when there is one; for E2B's
   * own domains the shared {@code https://sandbox.<domain>}; for any other domain (a self-hosted
   * E2B) the per-sandbox host {@code https://49983-<id>.<domain>}. Every request carries the
   * routing headers either way.
   */
  static URI envdUrl(@Nullable URI sandboxUrl, String sandboxId, String domain) {
    if (sandboxUrl != null) {
      return sandboxUrl;
    }
    if (E2B_DOMAINS.contains(domain)) {
      return URI.create("https://sandbox." + domain);
    }
    return URI.create("https://" + Envd.PORT + "-" + sandboxId + "." + domain);
  }

  /**
   * A handle to a sandbox a listing showed, made from the listing's row alone: nothing is asked
   * per sandbox, and no deadline moves. Its daemon's address and token are looked up when it is
   * first used ({@code GET /sandboxes/{id}}, which changes nothing); a sandbox gone or paused by
   * then makes that first call throw {@link SandboxNotFoundException} or
   * {@link io.sandboxes.SandboxPausedException}. Only when the record carries no daemon token (a
   * server that hands it out on connect alone) is the sandbox connected, asking for one second:
   * connect only ever extends a deadline, so a later one stays where it is.
   */
  LiveSandbox listed(SandboxInfo row) {
    String id = row.id();
    Envd envd = Envd.resolvedOnFirstUse(http, id, () -> listedAddress(id), (what, message) -> unreachable(id, what, message));
    return new LiveSandbox(this, id, row.templateId(), row.envdVersion(), envd, domain);
  }

  private Envd.Address listedAddress(String sandboxId) {
    JsonNode detail = controlPlane.info(sandboxId);
    if ("paused".equals(Json.text(detail, "state"))) {
      throw new io.sandboxes.SandboxPausedException(sandboxId, "a call into sandbox " + sandboxId);
    }
    if (Json.text(detail, "envdAccessToken") == null) {
      detail = controlPlane.connect(sandboxId, 1);
    }
    String sandboxDomain = Json.text(detail, "domain");
    String effectiveDomain = sandboxDomain == null || sandboxDomain.isBlank() ? domain : sandboxDomain;
    return new Envd.Address(envdUrl(sandboxUrl, sandboxId, effectiveDomain), Json.text(detail, "envdAccessToken"));
  }

  static SandboxInfo toInfo(JsonNode row) {
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
          NetworkWire.read(row));
    } catch (RuntimeException e) {
      throw new SandboxException("a sandbox record of a shape this client cannot read: " + Json.abbreviate(row), e);
    }
  }

  /** The control plane's state names; anything else is a record this client cannot read. */
  static SandboxState state(String wire) {
    return switch (wire) {
      case "running" -> SandboxState.RUNNING;
      case "paused" -> SandboxState.PAUSED;
      default -> throw new IllegalArgumentException("unknown sandbox state '" + wire + "'");
    };
  }

  static List<io.sandboxes.VolumeMount> volumeMounts(@Nullable JsonNode mounts) {
    List<io.sandboxes.VolumeMount> out = new ArrayList<>();
    if (mounts != null && mounts.isArray()) {
      mounts.forEach(m -> out.add(new io.sandboxes.VolumeMount(m.path("name").asText(), m.path("path").asText())));
    }
    return out;
  }

}
