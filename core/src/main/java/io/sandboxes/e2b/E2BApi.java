package io.sandboxes.e2b;

import static io.sandboxes.e2b.ApiRequests.requireAlias;
import static io.sandboxes.e2b.ApiRequests.requirePositive;
import static io.sandboxes.e2b.ApiRequests.seconds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Http;
import java.net.URI;
import java.time.Duration;
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
  // read by the package's collaborators (SandboxHandles); not API
  final Http http;
  final ControlPlane controlPlane;
  final @Nullable URI sandboxUrl;
  final String domain;

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
   * This API with settings for some calls only, as E2B's per-call options ({@code apiKey},
   * {@code domain}, {@code apiHeaders}, {@code requestTimeoutMs}, {@code retries}): several accounts
   * or tagged requests through one provider and its HTTP client. Sandboxes created or connected
   * through the view keep its settings. The provider is untouched; the view needs no closing.
   *
   * @param options what to change
   * @return the view
   */
  public E2BApi with(CallOptions options) {
    return Objects.requireNonNull(options, "options").applyTo(this);
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
    JsonNode sandbox = controlPlane.create(ApiRequests.createBody(spec));
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
    return ApiAnswers.info(controlPlane.info(sandboxId));
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
    return new SandboxPage(ApiAnswers.infos(page.rows()), page.nextToken());
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
    return ApiPaging.sandboxes(this, query);
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
    return ApiAnswers.forks(answer, sandbox -> handle(sandbox, "fork sandbox " + sandboxId), sandboxId);
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
    return ApiAnswers.metrics(controlPlane.metrics(sandboxId, ApiRequests.unixSeconds(start), ApiRequests.unixSeconds(end)));
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
    return ApiAnswers.templateAlias(controlPlane.templateAlias(requireAlias(alias)), alias);
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
    return ApiAnswers.volume(controlPlane.createVolume(Objects.requireNonNull(name, "name")));
  }

  /**
   * Lists the account's volumes.
   *
   * @return every volume of the account
   */
  public List<VolumeInfo> listVolumes() {
    ensureOpen();
    return controlPlane.listVolumes().stream().map(ApiAnswers::volume).toList();
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
    return v == null ? Optional.empty() : Optional.of(ApiAnswers.volume(v));
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
    return ApiAnswers.snapshot(controlPlane.createSnapshot(sandboxId, name));
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
    return ApiPaging.snapshots(this, SnapshotQuery.all().withSandboxId(sandboxId).withName(name));
  }

  /**
   * Reads one page of the snapshot listing, as E2B's {@code Sandbox.listSnapshots(opts)} paginator.
   *
   * @param query of which sandbox, under which name, how many per page, and the token of the page
   * @return the page, with the token of the next one when there is more
   * @throws SandboxException when the listing cannot be read; never an empty page instead
   */
  public SnapshotPage listSnapshots(SnapshotQuery query) {
    ensureOpen();
    ControlPlane.Page page = controlPlane.listSnapshots(query.sandboxId(), query.name(), query.limit(), query.nextToken());
    return new SnapshotPage(page.rows().stream().map(ApiAnswers::snapshot).toList(), page.nextToken());
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

  private LiveSandbox handle(JsonNode sandbox, String context) {
    return SandboxHandles.handle(this, sandbox, context);
  }
}
