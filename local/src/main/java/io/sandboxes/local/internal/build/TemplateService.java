package io.sandboxes.local.internal.build;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Templates built through E2B's v2 build protocol: a build is requested ({@code POST
 * /v3/templates}), its COPY contexts uploaded as tars keyed by their hash, then started with a
 * base ({@code fromTemplate}: any local template or snapshot; {@code fromImage}: an image already
 * in the local Docker) and steps COPY, ENV, RUN, WORKDIR and USER.
 *
 * <p>Each RUN and COPY runs as a step from the previous step's image and is committed to an
 * image; ENV, WORKDIR and USER are carried in the build's state and applied to the steps that
 * follow. A step's image is labelled with a key over its parent image, its
 * content and that state, so an unchanged step is found again instead of run. The template is
 * registered by one last commit that labels the image with the template's id and name: a build
 * that fails or a server that stops before it leaves no template, only unlabelled cache images.
 *
 * <p>This class coordinates: {@link BuildRequests} takes requests, {@link BuildUploads} keeps the
 * uploaded COPY contexts, {@link BuildRunner} runs a build ({@link StepRunner} its steps and
 * cache, {@link CopyStep} its COPY steps, {@link TemplateRegistration} its last commit), {@link
 * TemplateCatalogue} answers what is built and moves tags, {@link ImageSweeper} removes what is
 * no longer needed.
 */
public class TemplateService implements AutoCloseable {
  /** The tag a build without tags gets, and the one a bare name means. */
  public static final String DEFAULT_TAG = "default";
  /** The most an uploaded COPY context may hold. */
  public static final long MAX_UPLOAD = BuildUploads.MAX_UPLOAD;
  /** How many finished builds keep their logs; an older one's status says its log was let go. */
  static final int LOGS_KEPT = 100;
  /** The longest one build may run before it fails. */
  static final Duration BUILD_LIMIT = Duration.ofHours(1);

  /** One registered build of a template, with the tags that point at it. */
  public record Built(String templateId, String name, String buildId, Instant createdAt, String imageId, Defaults defaults,
      List<String> tags, int cpuCount, int memoryMB) {}

  /** What a built template gives its sandboxes. */
  public record Defaults(Map<String, String> env, String workdir, String user, @Nullable String startCmd, @Nullable String readyCmd) {}

  /** One build log line. */
  public record LogEntry(Instant timestamp, String level, String message, @Nullable String step) {}

  /** A build's status as the status endpoint reports it. */
  public record Status(String templateId, String buildId, String state, List<LogEntry> entries, @Nullable String reason,
      @Nullable String reasonStep, List<LogEntry> reasonEntries) {}

  /** A requested build: what {@code POST /v3/templates} answers. */
  public record Requested(String templateId, String buildId, String name, List<String> tags, int cpuCount, int memoryMB,
      Instant requestedAt) {}

  private final BuildRuntime runtime;
  private final Map<String, Build> builds = new ConcurrentHashMap<>();
  private final ExecutorService runner = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("template-build-", 0).factory());
  /** Where the builds' CPU-heavy work runs (see {@link CopyStep}). */
  private final ExecutorService cpu;
  private final BuildUploads uploads;
  private final long budgetMB;
  /** Held while a template is registered or deleted; a lock, not a monitor, so virtual threads waiting on the runtime under it stay unpinned. */
  private final java.util.concurrent.locks.ReentrantLock registration = new java.util.concurrent.locks.ReentrantLock();
  private final ImageSweeper sweeper;
  private final TemplateCatalogue catalogue;
  private final BuildRequests requests;
  private final BuildRunner buildRunner;

  /** How many threads run the builds' CPU-heavy work: half the cores, at least one. */
  static final int CPU_THREADS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

  /**
   * @param files where uploads are kept (what a previous run left there is removed)
   * @param runtime where steps run and images are kept
   * @param budgetMB what one build's COPY archives may expand to, in MiB; all uploads together
   *     may hold as much
   * @param sandboxLabels the labels the sandbox side puts on containers and images: blanked on
   *     every build image, so none passes for a sandbox, snapshot, fork or pool member
   */
  public TemplateService(BuildRuntime runtime, KnownTemplates templates, Path files, String serverId, String baseImage, long budgetMB,
      Set<String> sandboxLabels) {
    this.runtime = runtime;
    this.budgetMB = budgetMB;
    this.uploads = new BuildUploads(files, budgetMB << 20);
    this.cpu = Executors.newFixedThreadPool(CPU_THREADS, Thread.ofPlatform().name("template-build-cpu-", 0).daemon(true).factory());
    this.sweeper = new ImageSweeper(runtime, serverId, registration, builds.values());
    this.catalogue = new TemplateCatalogue(runtime, sweeper, runner, registration);
    this.requests = new BuildRequests(templates, catalogue);
    StepRunner stepRunner = new StepRunner(runtime, sweeper, serverId, Set.copyOf(sandboxLabels));
    this.buildRunner = new BuildRunner(runtime, templates, catalogue, uploads, stepRunner, new CopyStep(runtime, uploads, stepRunner, cpu),
        new TemplateRegistration(runtime, templates, stepRunner, catalogue, sweeper, runner, registration, serverId), baseImage);
    sweeper.removeLeftoverSteps();
  }

  /** The uploads of COPY contexts (for tests: their sweep). */
  BuildUploads uploads() {
    return uploads;
  }

  /**
   * For tests: removes the uploads nothing holds that nobody uploaded or used since {@code now}
   * less their retention, as the periodic sweep does.
   *
   * @return how many files went
   */
  public int sweepUploadsForTesting(Instant now) {
    return uploads.sweep(now);
  }

  /**
   * Removes, in the background, the images a previous run of this server left: step images of
   * builds that did not finish, and builds no tag points at (a sandbox used them at their
   * delete). A step image another image is built on, or a container uses, stays.
   */
  public void sweepAtStart() {
    runner.execute(sweeper::previousRun);
  }

  /**
   * A sandbox's container was removed: builds no tag points at that a sandbox used when they were
   * to go are tried again (called on the removing thread, after each removal).
   */
  public void sandboxRemoved() {
    sweeper.sandboxRemoved();
  }

  // ---- requests and uploads ----

  /**
   * Requests a build of {@code name} (a template of that name is rebuilt under its id).
   *
   * @throws RpcError invalid_argument for a bad name
   */
  public Requested request(@Nullable String nameWithTag, List<String> tags, int cpuCount, int memoryMB) throws RpcError {
    return requests.request(nameWithTag, tags, cpuCount, memoryMB);
  }

  /**
   * Whether the files of a COPY are here already; when not, a token to upload them with.
   *
   * @return null when present, else the upload token
   */
  public @Nullable String fileLink(String templateId, String hash) throws RpcError {
    BuildUploads.checkHash(hash);
    if (!requests.knownTemplate(templateId)) {
      throw new RpcError("not_found", "template '" + templateId + "' not found");
    }
    return uploads.present(hash) ? null : uploads.link(templateId, hash);
  }

  /**
   * Stores an upload made with a token from {@link #fileLink}; at most {@link #MAX_UPLOAD} bytes.
   * What it holds is checked against its hash by the COPY step that uses it.
   *
   * @param length the body's declared length, or -1
   * @throws RpcError unauthenticated for an unknown or expired token, invalid_argument for a body
   *     too large, resource_exhausted when the store of uploads is full
   */
  public void upload(String templateId, String hash, @Nullable String token, InputStream body, long length)
      throws RpcError, IOException {
    uploads.upload(templateId, hash, token, body, length);
  }

  // ---- builds ----

  /**
   * Starts a requested build; it runs on, reported by {@link #status}.
   *
   * @param body read once the build is known to be requested
   * @throws RpcError not_found for an unknown build, already_exists for one started before, invalid_argument for a bad body
   */
  public void start(String templateId, String buildId, BuildStart.Reader body) throws RpcError {
    Requested r = requests.requested(templateId, buildId);
    BuildStart start = body.read();
    for (BuildStart.Step step : start.steps()) {
      String type = step.type();
      if (type == null || !List.of("COPY", "ENV", "RUN", "WORKDIR", "USER").contains(type)) {
        throw new RpcError("invalid_argument", "unknown step type '" + type + "' (COPY, ENV, RUN, WORKDIR or USER)");
      }
    }
    if (start.fromImageRegistry()) {
      throw new RpcError("invalid_argument", "'fromImageRegistry' is not supported by the local runtime: it pulls nothing");
    }
    if ((start.fromImage() == null) == (start.fromTemplate() == null)) {
      throw new RpcError("invalid_argument", "exactly one of 'fromImage' and 'fromTemplate' is required");
    }
    Build b = new Build(r, new BuildBudget(budgetMB));
    if (builds.putIfAbsent(buildId, b) != null) {
      throw new RpcError("already_exists", "build '" + buildId + "' was started already");
    }
    dropOldLogs();
    runner.execute(() -> buildRunner.run(b, start));
  }

  /** @return the build's status and its log entries from {@code offset} on (at most {@code limit}) */
  public Status status(String templateId, String buildId, int offset, int limit) throws RpcError {
    requests.requested(templateId, buildId);
    Build b = builds.get(buildId);
    if (b == null) {
      return new Status(templateId, buildId, "waiting", List.of(), null, null, List.of());
    }
    String state = b.state;
    String step = b.reasonStep;
    return new Status(templateId, buildId, state, b.log.page(offset, limit), b.reason, step,
        step == null ? List.of() : b.log.lastOf(step, 50));
  }

  /** Lets go of the logs of finished builds beyond the {@link #LOGS_KEPT} newest. */
  private void dropOldLogs() {
    List<Build> finished = new ArrayList<>(builds.values().stream().filter(x -> x.finishedAt != null).toList());
    finished.sort(Comparator.comparing((Build x) -> java.util.Objects.requireNonNull(x.finishedAt)).reversed());
    for (Build old : finished.subList(Math.min(LOGS_KEPT, finished.size()), finished.size())) {
      old.log.drop("the log of this build was let go: the server keeps the logs of the " + LOGS_KEPT + " newest finished builds");
    }
  }

  // ---- registered templates (the catalogue's) ----

  /** @return every built template, newest first (one per id: its newest build) */
  public List<Built> list() {
    return catalogue.list();
  }

  /** @return every registered build of every template, newest first */
  public List<Built> builds() {
    return catalogue.builds();
  }

  /** @return the registered builds of one template (by its id or name, a tag ignored), newest first */
  public List<Built> buildsOf(String idOrName) {
    return catalogue.buildsOf(idOrName);
  }

  /**
   * The build a template reference stands for: {@code name} or {@code id} is its {@code default}
   * tag's build, {@code name:tag} that tag's, {@code name:<build id>} that build while a tag points at it.
   */
  public Optional<Built> find(String reference) {
    return catalogue.find(reference);
  }

  /** A built template by its id or name, whatever its tags: its newest build. */
  public Optional<Built> findTemplate(String idOrName) {
    return catalogue.findTemplate(idOrName);
  }

  /** @return the image of a built template, or null */
  public @Nullable String resolve(String idOrName) {
    return catalogue.resolve(idOrName);
  }

  /** The defaults a template gives its sandboxes; empty for base and snapshots. */
  public Optional<Defaults> defaults(String templateId) {
    return catalogue.defaults(templateId);
  }

  /**
   * Deletes a built template, every build of it.
   *
   * @param sandboxes the server's sandboxes: one created from the template keeps it
   * @return false when there is no such template
   * @throws RpcError already_exists when a sandbox was created from it
   */
  public boolean deleteUnlessUsed(String idOrName, List<SandboxUse> sandboxes) throws RpcError {
    return catalogue.delete(idOrName, sandboxes);
  }

  /** A sandbox as a template's delete sees it: which template it was created from, and whether it is paused. */
  public record SandboxUse(String id, String templateId, boolean paused) {}

  /**
   * Points tags at the build {@code target} ({@code name:tag}, or a bare name for its
   * {@code default}) stands for, moving each from where it pointed; a build no tag points at any
   * more goes.
   *
   * @throws RpcError invalid_argument for no or bad tags, not_found for an unknown target
   */
  public Assigned assignTags(@Nullable String target, List<String> rawTags) throws RpcError {
    return catalogue.assignTags(target, rawTags);
  }

  /**
   * Removes tags from a template. The {@code default} tag stays (as on E2B), and so does a
   * template's last tag (delete the template instead); a tag it does not have is already gone.
   *
   * @throws RpcError invalid_argument for a name with a tag, no or bad tags, {@code default} or the
   *     last tag; not_found for an unknown template
   */
  public void removeTags(@Nullable String name, List<String> rawTags) throws RpcError {
    catalogue.removeTags(name, rawTags);
  }

  /**
   * @return the tags of a template by id or name, each with its build (its time is the build's: the
   *     local runtime keeps no time of an assignment)
   * @throws RpcError not_found for an unknown template
   */
  public List<TagInfo> tagsOf(String idOrName) throws RpcError {
    return catalogue.tagsOf(idOrName);
  }

  /** One build of a template as {@code GET /templates/{id}} lists it. */
  public record BuildInfo(String buildId, String state, Instant createdAt, Instant updatedAt, @Nullable Instant finishedAt, int cpuCount,
      int memoryMB) {}

  /** A template with its builds, newest first: those a tag points at, and those of this server's run not finished or failed. */
  public record TemplateInfo(String templateId, String name, Instant createdAt, Instant updatedAt, List<BuildInfo> builds) {}

  /** What an assignment of tags answers: the build they point at now. */
  public record Assigned(String buildId, List<String> tags) {}

  /** One tag of a template as E2B lists it. */
  public record TagInfo(String tag, String buildId, Instant createdAt) {}

  /** @return a built template by id or name with its builds; empty when no build of it is registered */
  public Optional<TemplateInfo> template(String idOrName) {
    List<Built> registered = buildsOf(idOrName);
    if (registered.isEmpty()) {
      return Optional.empty();
    }
    String templateId = registered.get(0).templateId();
    List<BuildInfo> out = new ArrayList<>();
    Set<String> seen = new java.util.HashSet<>();
    for (Built t : registered) {
      seen.add(t.buildId());
      out.add(new BuildInfo(t.buildId(), "ready", t.createdAt(), t.createdAt(), t.createdAt(), t.cpuCount(), t.memoryMB()));
    }
    for (Requested r : requests.all()) {
      Build b = builds.get(r.buildId());
      if (!r.templateId().equals(templateId) || seen.contains(r.buildId()) || (b != null && b.state.equals("ready"))) {
        continue; // a finished build no tag points at is gone
      }
      Instant finished = b == null ? null : b.finishedAt;
      out.add(new BuildInfo(r.buildId(), b == null ? "waiting" : b.state, r.requestedAt(), finished == null ? r.requestedAt() : finished,
          finished, r.cpuCount(), r.memoryMB()));
    }
    out.sort(Comparator.comparing(BuildInfo::createdAt).reversed().thenComparing(BuildInfo::buildId));
    Instant created = out.stream().map(BuildInfo::createdAt).min(Comparator.naturalOrder()).orElseThrow();
    Instant updated = out.stream().map(BuildInfo::updatedAt).max(Comparator.naturalOrder()).orElseThrow();
    return Optional.of(new TemplateInfo(templateId, registered.get(0).name(), created, updated, out));
  }

  @Override
  public void close() {
    builds.values().forEach(b -> b.cancelled = true);
    runner.shutdownNow();
    cpu.shutdownNow();
    uploads.close();
    try {
      runner.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    builds.values().forEach(b -> b.steps.forEach(runtime::removeStep));
  }
}
