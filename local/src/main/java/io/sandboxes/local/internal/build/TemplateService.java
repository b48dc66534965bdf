package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Image;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.RpcError;
import io.sandboxes.local.internal.StructuredLog;
import io.sandboxes.local.internal.Templates;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Templates built through E2B's v2 build protocol: a build is requested ({@code POST
 * /v3/templates}), its COPY contexts uploaded as tars keyed by their hash, then started with a
 * base ({@code fromTemplate}: any local template or snapshot; {@code fromImage}: an image already
 * in the local Docker) and steps COPY, ENV, RUN, WORKDIR and USER.
 *
 * <p>Each RUN and COPY runs as a container from the previous step's image and is committed
 * ({@code docker commit}); ENV, WORKDIR and USER are carried in the build's state and applied to
 * the containers that follow. A step's image is labelled with a key over its parent image, its
 * content and that state, so an unchanged step is found again instead of run. The template is
 * registered by one last commit that labels the image with the template's id and name: a build
 * that fails or a server that stops before it leaves no template, only unlabelled cache images.
 */
public class TemplateService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TemplateService.class);
  /** The tag a build without tags gets, and the one a bare name means. */
  public static final String DEFAULT_TAG = "default";
  private static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9_.-]{0,62}$");
  private static final Pattern HASH = Pattern.compile("^[a-f0-9]{64}$");
  private static final Pattern ENV_KEY = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");
  private static final Pattern USER = Pattern.compile("^[a-z_][a-z0-9_-]{0,31}$|^[0-9]{1,9}$");
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

  private final class Build {
    final Requested request;
    volatile String state = "waiting";
    final BuildLog log = new BuildLog();
    final BuildBudget budget;
    volatile @Nullable String reason;
    volatile @Nullable String reasonStep;
    volatile @Nullable Instant finishedAt;
    final Set<String> containers = ConcurrentHashMap.newKeySet();
    /** The step images this build committed, oldest first: removed when it does not finish. */
    final List<String> committed = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The cached step images this build goes on from: a failed build does not remove them meanwhile. */
    final Set<String> uses = ConcurrentHashMap.newKeySet();
    volatile boolean cancelled;

    Build(Requested request, BuildBudget budget) {
      this.request = request;
      this.budget = budget;
    }

    /** A line of the server's own (a step's heading, an outcome). */
    void log(String level, String message, @Nullable String step) {
      log.server(level, message, step);
    }

    /** A line a step's container printed. */
    void output(String level, String message, @Nullable String step) {
      log.output(level, message, step);
    }
  }

  private final DockerRuntime docker;
  private final Templates templates;
  private final Path files;
  private final String serverId;
  private final String baseImage;
  private final String buildNetwork;
  private final Set<String> sandboxLabels;
  private final Map<String, Requested> requested = new ConcurrentHashMap<>();
  private final Map<String, Build> builds = new ConcurrentHashMap<>();
  private final ExecutorService runner = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("template-build-", 0).factory());
  /**
   * Where the builds' CPU-heavy work runs (decompressing, hashing and re-packing COPY archives): a
   * few platform threads, so a build busy with it never holds the carriers of the virtual threads
   * that serve requests, and several builds at once queue here rather than take every core.
   */
  private final ExecutorService cpu;
  private final BuildUploads uploads;
  private final long budgetMB;
  /** Held while a step's image is looked up in the cache, and while a failed build picks the images it removes. */
  private final java.util.concurrent.locks.ReentrantLock cacheLock = new java.util.concurrent.locks.ReentrantLock();
  /** Step images a failed build is removing: the cache does not offer them. */
  private final Set<String> doomed = ConcurrentHashMap.newKeySet();
  /** Held while a template is registered or deleted; a lock, not a monitor, so virtual threads waiting on Docker under it stay unpinned. */
  private final java.util.concurrent.locks.ReentrantLock registration = new java.util.concurrent.locks.ReentrantLock();
  private final ImageSweeper sweeper;
  private final TemplateCatalogue catalogue;

  /** How many threads run the builds' CPU-heavy work: half the cores, at least one. */
  static final int CPU_THREADS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

  /**
   * @param files where uploads are kept (what a previous run left there is removed)
   * @param buildNetwork the Docker network build steps run on: the builds' own, behind the host
   *     firewall, when egress is enforced; Docker's default bridge otherwise
   * @param budgetMB what one build's COPY archives may expand to, in MiB; all uploads together
   *     may hold as much
   * @param sandboxLabels the labels the sandbox side puts on containers and images: blanked on
   *     every build image, so none passes for a sandbox, snapshot, fork or pool member
   */
  public TemplateService(DockerRuntime docker, Templates templates, Path files, String serverId, String baseImage,
      String buildNetwork, long budgetMB, Set<String> sandboxLabels) {
    this.sandboxLabels = Set.copyOf(sandboxLabels);
    this.buildNetwork = buildNetwork;
    this.docker = docker;
    this.templates = templates;
    this.files = files;
    this.serverId = serverId;
    this.baseImage = baseImage;
    this.budgetMB = budgetMB;
    this.uploads = new BuildUploads(files, budgetMB << 20);
    this.cpu = Executors.newFixedThreadPool(CPU_THREADS, Thread.ofPlatform().name("template-build-cpu-", 0).daemon(true).factory());
    this.sweeper = new ImageSweeper(docker, serverId, registration);
    this.catalogue = new TemplateCatalogue(docker, sweeper, runner, registration);
    sweeper.removeLeftoverContainers();
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

  // ---- requests and uploads ----

  /**
   * Requests a build of {@code name} (a template of that name is rebuilt under its id).
   *
   * @throws RpcError invalid_argument for a bad name
   */
  public Requested request(@Nullable String nameWithTag, List<String> tags, int cpuCount, int memoryMB) throws RpcError {
    if (nameWithTag == null || nameWithTag.isBlank()) {
      throw new RpcError("invalid_argument", "'name' is required");
    }
    String name = nameWithTag;
    List<String> named = new ArrayList<>();
    int colon = nameWithTag.indexOf(':');
    if (colon >= 0) {
      name = nameWithTag.substring(0, colon);
      named.add(nameWithTag.substring(colon + 1));
    }
    if (!NAME.matcher(name).matches() || name.equals(Templates.BASE)) {
      throw new RpcError("invalid_argument", "template name must be lowercase letters, digits, '_', '.' or '-' (and not 'base'), got '"
          + name + "'");
    }
    named.addAll(tags);
    List<String> allTags = TemplateTags.validTags(named);
    if (allTags.isEmpty()) {
      allTags = List.of(DEFAULT_TAG);
    }
    if (cpuCount < 1 || cpuCount > 8 || memoryMB < 128 || memoryMB > 16_384) {
      throw new RpcError("invalid_argument", "cpuCount must be 1 to 8 and memoryMB 128 to 16384");
    }
    if (templates.find(name).isPresent()) {
      // names are one namespace: a build must not hide a snapshot of that name, nor be hidden by it
      throw new RpcError("already_exists", "the name '" + name + "' is taken by a snapshot: delete it first or choose another name");
    }
    String finalName = name;
    String templateId = findTemplate(name).map(Built::templateId)
        .orElseGet(() -> requested.values().stream().filter(r -> r.name().equals(finalName)).map(Requested::templateId).findFirst()
            .orElseGet(() -> "tpl" + Registry.newSandboxId().substring(0, 17)));
    Requested r = new Requested(templateId, java.util.UUID.randomUUID().toString(), name, allTags, cpuCount, memoryMB, Instant.now());
    requested.put(r.buildId(), r);
    return r;
  }

  private Requested requested(String templateId, String buildId) throws RpcError {
    Requested r = requested.get(buildId);
    if (r == null || !r.templateId().equals(templateId)) {
      throw new RpcError("not_found", "build '" + buildId + "' of template '" + templateId + "' not found");
    }
    return r;
  }

  private boolean knownTemplate(String templateId) {
    return requested.values().stream().anyMatch(r -> r.templateId().equals(templateId)) || findTemplate(templateId).isPresent();
  }

  /**
   * Whether the files of a COPY are here already; when not, a token to upload them with.
   *
   * @return null when present, else the upload token
   */
  public @Nullable String fileLink(String templateId, String hash) throws RpcError {
    BuildUploads.checkHash(hash);
    if (!knownTemplate(templateId)) {
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
   * @throws RpcError not_found for an unknown build, already_exists for one started before, invalid_argument for a bad body
   */
  public void start(String templateId, String buildId, JsonNode body) throws RpcError {
    Requested r = requested(templateId, buildId);
    List<JsonNode> steps = new ArrayList<>();
    JsonNode s = body.get("steps");
    if (s != null && !s.isNull()) {
      if (!s.isArray()) {
        throw new RpcError("invalid_argument", "'steps' must be a list");
      }
      s.forEach(steps::add);
    }
    for (JsonNode step : steps) {
      String type = Json.text(step, "type");
      if (type == null || !List.of("COPY", "ENV", "RUN", "WORKDIR", "USER").contains(type)) {
        throw new RpcError("invalid_argument", "unknown step type '" + type + "' (COPY, ENV, RUN, WORKDIR or USER)");
      }
    }
    if (body.hasNonNull("fromImageRegistry")) {
      throw new RpcError("invalid_argument", "'fromImageRegistry' is not supported by the local runtime: it pulls nothing");
    }
    String fromImage = Json.text(body, "fromImage");
    String fromTemplate = Json.text(body, "fromTemplate");
    if ((fromImage == null) == (fromTemplate == null)) {
      throw new RpcError("invalid_argument", "exactly one of 'fromImage' and 'fromTemplate' is required");
    }
    Build b = new Build(r, new BuildBudget(budgetMB));
    if (builds.putIfAbsent(buildId, b) != null) {
      throw new RpcError("already_exists", "build '" + buildId + "' was started already");
    }
    dropOldLogs();
    boolean force = body.path("force").asBoolean(false);
    String startCmd = Json.text(body, "startCmd");
    String readyCmd = Json.text(body, "readyCmd");
    runner.execute(() -> run(b, fromImage, fromTemplate, steps, force, startCmd, readyCmd));
  }

  /** @return the build's status and its log entries from {@code offset} on (at most {@code limit}) */
  public Status status(String templateId, String buildId, int offset, int limit) throws RpcError {
    requested(templateId, buildId);
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

  /** The state a build carries from step to step. */
  private static final class State {
    String image;
    Map<String, String> env = new LinkedHashMap<>();
    String workdir;
    String user;

    State(String image, String workdir, String user) {
      this.image = image;
      this.workdir = workdir;
      this.user = user;
    }

    String describe() {
      return "env=" + env + "\nworkdir=" + workdir + "\nuser=" + user;
    }
  }

  private void run(Build b, @Nullable String fromImage, @Nullable String fromTemplate, List<JsonNode> steps, boolean force,
      @Nullable String startCmd, @Nullable String readyCmd) {
    b.state = "building";
    // the build refers to its COPY steps' uploads from its start: none is swept before its step comes
    List<String> refers = new ArrayList<>();
    for (JsonNode step : steps) {
      String h = Json.text(step, "filesHash");
      if ("COPY".equals(Json.text(step, "type")) && h != null && HASH.matcher(h).matches()) {
        uploads.hold(h);
        refers.add(h);
      }
    }
    Instant began = Instant.now();
    Instant deadline = began.plus(BUILD_LIMIT);
    // the outcome is published after the cleanup: a retry polled into starting must not find this build's images about to go
    String outcome = "error";
    try {
      State st = base(b, fromImage, fromTemplate);
      for (int i = 0; i < steps.size(); i++) {
        if (b.cancelled) {
          throw new StepFailed(Integer.toString(i + 1), "the build was cancelled");
        }
        step(b, st, Integer.toString(i + 1), steps.get(i), force, deadline);
      }
      b.log("info", "[finalize] registering template " + b.request.name(), "finalize");
      Defaults d = new Defaults(st.env, st.workdir, st.user, startCmd, readyCmd);
      register(b, st.image, d);
      b.log("info", "build finished in " + Duration.between(began, Instant.now()).toMillis() + " ms", "finalize");
      outcome = "ready";
      StructuredLog.atInfo(LOG).addKeyValue("event", "template.built").addKeyValue("template", b.request.templateId())
          .addKeyValue("name", b.request.name()).addKeyValue("ms", Duration.between(began, Instant.now()).toMillis()).log("template built");
    } catch (StepFailed e) {
      b.log("error", e.getMessage(), e.step);
      b.reason = e.getMessage();
      b.reasonStep = e.step;
    } catch (RuntimeException | IOException e) {
      LOG.warn("template build {} failed", b.request.buildId(), e);
      b.log("error", "the build failed: " + e.getMessage(), null);
      b.reason = "the build failed: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      b.reason = "the server stopped during the build";
    } finally {
      b.containers.forEach(docker::remove);
      if (!outcome.equals("ready")) {
        // a build that did not finish leaves no images: what it committed is no template's cache, unless a running build uses it
        List<String> gone = new ArrayList<>();
        cacheLock.lock();
        try {
          Set<String> used = new java.util.HashSet<>();
          builds.values().stream().filter(o -> o != b && o.finishedAt == null).forEach(o -> used.addAll(o.uses));
          b.committed.reversed().stream().filter(i -> !used.contains(i)).forEach(gone::add);
          doomed.addAll(gone);
        } finally {
          cacheLock.unlock();
        }
        try {
          sweeper.removeSteps(gone);
        } finally {
          gone.forEach(doomed::remove);
        }
      }
      refers.forEach(uploads::release);
      b.finishedAt = Instant.now();
      b.state = outcome;
    }
  }

  /** {@code debian:<suite>} or {@code debian:<suite>-slim}: a plain Debian suite, built here when it is not in the local Docker. */
  private static final java.util.regex.Pattern DEBIAN = java.util.regex.Pattern.compile("(?:docker\\.io/)?(?:library/)?debian:([a-z]+)(?:-slim)?");

  private State base(Build b, @Nullable String fromImage, @Nullable String fromTemplate) throws StepFailed {
    if (fromTemplate != null) {
      String image = templates.resolve(fromTemplate);
      if (image == null) {
        throw new StepFailed("base", "template '" + fromTemplate + "' not found: a local build starts from base, a built template or a"
            + " snapshot");
      }
      b.log("info", "[base] FROM template " + fromTemplate, "base");
      Optional<Defaults> d = defaults(fromTemplate);
      State st = new State(imageId(image), d.map(Defaults::workdir).orElse("/home/user"), d.map(Defaults::user).orElse("user"));
      d.ifPresent(x -> st.env.putAll(x.env()));
      return st;
    }
    String ref = java.util.Objects.requireNonNull(fromImage);
    if (ref.equals("e2bdev/base") || ref.equals("e2bdev/base:latest")) {
      if (!docker.imageExists(ref)) {
        b.log("info", "[base] FROM " + ref + ": E2B's base image stands for the local base template (" + baseImage + ")", "base");
        return new State(imageId(baseImage), "/home/user", "user");
      }
    }
    InspectImageResponse img;
    try {
      img = docker.client().inspectImageCmd(ref).exec();
    } catch (NotFoundException e) {
      java.util.regex.Matcher debian = DEBIAN.matcher(ref);
      if (!debian.matches()) {
        throw new StepFailed("base", "image '" + ref + "' is not in the local Docker, and the local runtime pulls nothing: "
            + "pull or build it first (docker pull " + ref + "), or start from a template or a Debian suite (debian:<suite>)");
      }
      String built;
      try {
        b.log("info", "[base] FROM " + ref + ": not in the local Docker; Debian " + debian.group(1)
            + " is built here from the Debian mirror with debootstrap (once per machine, about a minute)", "base");
        built = io.sandboxes.local.internal.docker.BaseImage.ensureDebian(docker, debian.group(1), line -> b.log("info", "[base] " + line, "base"));
      } catch (IllegalArgumentException | io.sandboxes.SandboxException failed) {
        throw new StepFailed("base", "image '" + ref + "' is not in the local Docker and could not be built here: " + failed.getMessage());
      }
      try {
        img = docker.client().inspectImageCmd(built).exec();
      } catch (NotFoundException gone) {
        throw new StepFailed("base", "the image built for '" + ref + "' (" + built + ") is gone");
      }
    }
    b.log("info", "[base] FROM image " + ref, "base");
    var cfg = img.getConfig();
    String user = cfg == null || cfg.getUser() == null || cfg.getUser().isEmpty() ? "root" : cfg.getUser();
    String dir = cfg == null || cfg.getWorkingDir() == null || cfg.getWorkingDir().isEmpty() ? "/" : cfg.getWorkingDir();
    State st = new State(img.getId(), dir, user);
    if (cfg != null && cfg.getEnv() != null) {
      for (String kv : cfg.getEnv()) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          st.env.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
      }
    }
    return st;
  }

  private String imageId(String ref) {
    return docker.client().inspectImageCmd(ref).exec().getId();
  }

  private void step(Build b, State st, String name, JsonNode step, boolean force, Instant deadline)
      throws StepFailed, IOException, InterruptedException {
    String type = java.util.Objects.requireNonNull(Json.text(step, "type"));
    List<String> args = new ArrayList<>();
    step.path("args").forEach(a -> args.add(a.asText()));
    String hash = Json.text(step, "filesHash");
    b.log("info", "[" + name + "] " + type + " " + String.join(" ", args), name);
    switch (type) {
      case "ENV" -> {
        if (args.isEmpty() || args.size() % 2 != 0) {
          throw new StepFailed(name, "ENV needs key and value pairs");
        }
        for (int i = 0; i < args.size(); i += 2) {
          if (!ENV_KEY.matcher(args.get(i)).matches()) {
            throw new StepFailed(name, "ENV key '" + args.get(i) + "' is not a valid variable name");
          }
          st.env.put(args.get(i), args.get(i + 1));
        }
      }
      case "WORKDIR" -> {
        if (args.size() != 1 || args.get(0).isEmpty()) {
          throw new StepFailed(name, "WORKDIR needs one path");
        }
        if (SafeTar.utf8Length(args.get(0)) > SafeTar.MAX_NAME || args.get(0).contains("\0")) {
          throw new StepFailed(name, "WORKDIR needs a path of at most " + SafeTar.MAX_NAME + " bytes");
        }
        String dir = args.get(0).startsWith("/") ? args.get(0) : CopyArchive.stripTrailingSlashes(st.workdir) + "/" + args.get(0);
        st.workdir = java.nio.file.Path.of(dir).normalize().toString();
        // Docker makes the directory when a container starts in it; make it now, as E2B does
        runContainer(b, st, name, List.of("/bin/sh", "-c", "mkdir -p \"$0\"", st.workdir), "root", "/", null, deadline,
            cacheKey(st, "WORKDIR", List.of(st.workdir), null), force);
      }
      case "USER" -> {
        if (args.size() != 1 || !USER.matcher(args.get(0)).matches()) {
          throw new StepFailed(name, "USER needs one user name");
        }
        st.user = args.get(0);
      }
      case "RUN" -> {
        if (args.isEmpty() || args.get(0).isBlank()) {
          throw new StepFailed(name, "RUN needs a command");
        }
        String user = args.size() > 1 && !args.get(1).isEmpty() ? args.get(1) : st.user;
        if (!USER.matcher(user).matches()) {
          throw new StepFailed(name, "RUN user '" + user + "' is not a user name");
        }
        runContainer(b, st, name, List.of("/bin/sh", "-c", args.get(0)), user, st.workdir, null, deadline,
            cacheKey(st, "RUN", args, null), force || step.path("force").asBoolean(false));
      }
      case "COPY" -> copy(b, st, name, args, hash, force || step.path("force").asBoolean(false), deadline);
      default -> throw new StepFailed(name, "unknown step type " + type);
    }
  }

  private static String cacheKey(State st, String type, List<String> args, @Nullable String hash) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update((st.image + "\n" + st.describe() + "\n" + type + "\n" + String.join("\u0000", args) + "\n" + hash)
          .getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A step's image found by its key, now one of the build's uses; none that a failed build is removing. */
  private @Nullable String cached(Build b, String key) {
    cacheLock.lock();
    try {
      // a step's image is the parent of the next one's: only a listing of all images shows it
      List<Image> hits = docker.client().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_CACHE_KEY, key)).exec();
      Optional<String> hit = hits.stream().map(Image::getId).filter(i -> !doomed.contains(i)).findFirst();
      hit.ifPresent(b.uses::add);
      return hit.orElse(null);
    } finally {
      cacheLock.unlock();
    }
  }

  /** The labels every image and container of a build carries, blanking what a base image may have passed on. */
  private Map<String, String> neutralLabels() {
    Map<String, String> l = new HashMap<>();
    sandboxLabels.forEach(k -> l.put(k, ""));
    l.put(LABEL_TEMPLATE_ID, "");
    l.put(LABEL_TEMPLATE_NAME, "");
    l.put(LABEL_TEMPLATE_DEFAULTS, "");
    l.put(LABEL_CACHE_KEY, "");
    // a committed image must not carry its step container's server: a sandbox created from it would pass for a build leftover
    l.put(LABEL_BUILD_CONTAINER, "");
    l.put(LABEL_STEP_OF, "");
    l.put(LABEL_STEP_SERVER, "");
    l.put(LABEL_BUILT_BY, "");
    l.put(LABEL_TEMPLATE_BUILD, "");
    l.put(LABEL_TEMPLATE_RESOURCES, "");
    return l;
  }

  private String createContainer(Build b, State st, List<String> cmd, String user, String workdir) {
    Map<String, String> labels = neutralLabels();
    labels.put(LABEL_BUILD_CONTAINER, serverId);
    List<String> env = new ArrayList<>();
    st.env.forEach((k, v) -> env.add(k + "=" + v));
    HostConfig host = DockerRuntime.confined(HostConfig.newHostConfig())
        .withNetworkMode(buildNetwork)
        .withNanoCPUs(b.request.cpuCount() * 1_000_000_000L)
        .withMemory(b.request.memoryMB() * 1024L * 1024L)
        .withPidsLimit(4096L)
        .withInit(true)
        .withRuntime(docker.runtime()) // a RUN step is as hostile as a sandbox: same runtime (gVisor when chosen)
        // what a step prints is read through an attach (see runContainer), never from a log on the host's disk
        .withLogConfig(new com.github.dockerjava.api.model.LogConfig(com.github.dockerjava.api.model.LogConfig.LoggingType.NONE));
    try (CreateContainerCmd c = docker.client().createContainerCmd(st.image)) {
      String id = c.withLabels(labels).withEnv(env).withUser(user).withWorkingDir(workdir).withCmd(cmd).withEntrypoint(List.of())
          .withHostConfig(host).exec().getId();
      b.containers.add(id);
      return id;
    }
  }

  /**
   * Runs one step as a container from the state's image (or finds its image in the cache),
   * streaming its output to the build log, and makes its committed image the state's.
   */
  private void runContainer(Build b, State st, String name, List<String> cmd, String user, String workdir,
      java.util.function.@Nullable Consumer<String> beforeStart, Instant deadline, String key, boolean force)
      throws StepFailed, InterruptedException {
    if (!force) {
      String hit = cached(b, key);
      if (hit != null) {
        b.log("info", "[" + name + "] CACHED", name);
        st.image = hit;
        return;
      }
    }
    String id;
    try {
      id = createContainer(b, st, cmd, user, workdir);
    } catch (RuntimeException e) {
      throw new StepFailed(name, "the step's container could not be created: " + e.getMessage());
    }
    if (beforeStart != null) {
      beforeStart.accept(id);
    }
    ResultCallback.Adapter<Frame> logs = null;
    try {
      // attached before the start, so every byte it prints comes here (the container logs nothing on the host); a step
      // printing faster than its log takes it is held back by the attach, never buffered without bound
      logs = attachOutput(b, name, id);
      DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(id).exec());
      long left = Math.max(1, Duration.between(Instant.now(), deadline).toSeconds());
      Integer code = docker.client().waitContainerCmd(id).exec(new com.github.dockerjava.api.command.WaitContainerResultCallback())
          .awaitStatusCode(left, TimeUnit.SECONDS);
      logs.awaitCompletion(10, TimeUnit.SECONDS);
      if (code == null) {
        throw new StepFailed(name, "step " + name + " did not report an exit code");
      }
      if (code != 0) {
        throw new StepFailed(name, "step " + name + " failed with exit code " + code);
      }
      Map<String, String> labels = neutralLabels();
      labels.put(LABEL_CACHE_KEY, key);
      labels.put(LABEL_STEP_OF, b.request.templateId());
      labels.put(LABEL_STEP_SERVER, serverId);
      st.image = docker.client().commitCmd(id).withLabels(labels).exec();
      b.committed.add(st.image);
      b.uses.add(st.image);
    } catch (com.github.dockerjava.api.exception.DockerClientException e) {
      throw new StepFailed(name, "step " + name + " did not finish within the build's limit of " + BUILD_LIMIT.toMinutes() + " minutes");
    } catch (RuntimeException e) {
      throw new StepFailed(name, "step " + name + " could not run: " + e.getMessage());
    } finally {
      if (logs != null) {
        try {
          logs.close();
        } catch (IOException ignored) {
          // the container goes next
        }
      }
      docker.remove(id);
      b.containers.remove(id);
    }
  }

  /** How long an attach to a step's container may take to be answered. */
  private static final Duration ATTACHED = Duration.ofSeconds(30);

  /**
   * Attaches to a created step container's stdout and stderr, each line going to the build's log
   * (which keeps a bounded part of them), and returns once Docker has answered the attach.
   */
  private ResultCallback.Adapter<Frame> attachOutput(Build b, String name, String id) throws StepFailed, InterruptedException {
    java.util.concurrent.CountDownLatch attached = new java.util.concurrent.CountDownLatch(1);
    ResultCallback.Adapter<Frame> out = docker.client().attachContainerCmd(id).withFollowStream(true).withStdOut(true).withStdErr(true)
        .exec(new ResultCallback.Adapter<Frame>() {
          private final StringBuilder partial = new StringBuilder();
          private String partialLevel = "info";

          @Override
          public void onStart(java.io.Closeable stream) {
            super.onStart(stream);
            attached.countDown();
          }

          @Override
          public void onNext(Frame f) {
            String text = new String(f.getPayload(), StandardCharsets.UTF_8);
            String level = f.getStreamType() == com.github.dockerjava.api.model.StreamType.STDERR ? "warn" : "info";
            if (!level.equals(partialLevel) && !partial.isEmpty()) {
              b.output(partialLevel, partial.toString(), name);
              partial.setLength(0);
            }
            partialLevel = level;
            int from = 0;
            int nl;
            while ((nl = text.indexOf('\n', from)) >= 0) {
              partial.append(text, from, nl);
              b.output(level, partial.toString(), name);
              partial.setLength(0);
              from = nl + 1;
            }
            partial.append(text, from, text.length());
            if (partial.length() > BuildLog.MAX_LINE) {
              b.output(level, partial.toString(), name);
              partial.setLength(0);
            }
          }

          @Override
          public void onError(Throwable t) {
            attached.countDown();
            super.onError(t);
          }

          @Override
          public void onComplete() {
            attached.countDown();
            if (!partial.isEmpty()) {
              b.output(partialLevel, partial.toString(), name);
            }
            super.onComplete();
          }
        });
    if (!attached.await(ATTACHED.toSeconds(), TimeUnit.SECONDS)) {
      throw new StepFailed(name, "step " + name + ": Docker did not answer the attach to its container within " + ATTACHED.toSeconds()
          + " s");
    }
    return out;
  }

  /**
   * COPY {@code src dest [user] [mode]}: the files of {@code src} from the uploaded context,
   * re-packed under {@code dest} (a {@code dest} ending in {@code /}, or a directory {@code src},
   * receives the contents), owned by the user. A path outside the context is refused; so is an
   * upload that is not what its hash says (it is removed), and one that expands past the build's
   * budget. The CPU-heavy part runs on {@link #cpu}.
   */
  private void copy(Build b, State st, String name, List<String> args, @Nullable String hash, boolean force, Instant deadline)
      throws StepFailed, IOException, InterruptedException {
    if (args.size() < 2) {
      throw new StepFailed(name, "COPY needs a source and a destination");
    }
    String src = args.get(0);
    String dest = args.get(1);
    String user = args.size() > 2 && !args.get(2).isEmpty() ? args.get(2) : st.user;
    String mode = args.size() > 3 ? args.get(3) : "";
    String rel = CopyArchive.normalizeSource(name, src);
    if (SafeTar.utf8Length(dest) > SafeTar.MAX_NAME) {
      throw new StepFailed(name, "COPY destination '" + SafeTar.abbreviate(dest) + "' is longer than " + SafeTar.MAX_NAME + " bytes");
    }
    String destPath = dest.startsWith("/") ? dest : CopyArchive.stripTrailingSlashes(st.workdir) + "/" + dest;
    if (destPath.contains("\0") || Path.of(destPath).normalize().toString().contains("..")) {
      throw new StepFailed(name, "COPY destination '" + SafeTar.abbreviate(dest) + "' is not a plain path");
    }
    if (!USER.matcher(user).matches() || !mode.matches("^[0-7]{0,4}$")) {
      throw new StepFailed(name, "COPY user or mode is malformed");
    }
    if (hash == null || !HASH.matcher(hash).matches()) {
      throw new StepFailed(name, "COPY needs the filesHash of its uploaded files");
    }
    Path tar;
    try {
      tar = uploads.acquire(hash);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new StepFailed(name, "the files of COPY " + SafeTar.abbreviate(src) + " were not uploaded (hash " + hash + ")");
    }
    Path repacked = null;
    try {
      repacked = uploads.temp("copy-");
      Path out = repacked;
      CopyArchive.Step what = new CopyArchive.Step(name, src, dest, rel, destPath, hash);
      boolean verify = !uploads.verified(hash, src, dest);
      List<String> targets = onCpu(name, () -> CopyArchive.repack(what, tar, out, b.budget, verify));
      if (verify) {
        uploads.markVerified(hash, src, dest);
      }
      if (targets.isEmpty()) {
        throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": no files of that path were uploaded");
      }
      List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", COPY_SCRIPT, user, mode));
      cmd.addAll(targets);
      runContainer(b, st, name, cmd, "root", "/", id -> {
        try (InputStream in = Files.newInputStream(out)) {
          docker.client().copyArchiveToContainerCmd(id).withRemotePath("/").withTarInputStream(in).exec();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, deadline, cacheKey(st, "COPY", List.of(rel, destPath, user, mode), hash), force);
    } catch (CopyArchive.Mismatch e) {
      uploads.refuse(hash, "not what its hash says");
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": " + e.getMessage());
    } catch (SafeTar.Refused e) {
      uploads.refuse(hash, "refused: " + e.getMessage());
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the uploaded files are refused: " + e.getMessage()
          + " (the upload is removed)");
    } catch (SafeTar.TooLarge e) {
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the build's COPY steps expand their uploaded files to more"
          + " than its budget of " + b.budget.describe() + "; a build's budget is the server's disk size per sandbox"
          + " (--disk-mb), unless LocalServer.builder().templateBuildBudgetMB sets it apart");
    } catch (java.util.zip.ZipException | java.io.EOFException e) {
      uploads.refuse(hash, "unreadable: " + e.getMessage());
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + ": the uploaded files are not a readable tar or tar.gz ("
          + e.getMessage() + "); the upload is removed");
    } catch (java.io.UncheckedIOException e) {
      throw new StepFailed(name, "COPY " + SafeTar.abbreviate(src) + " could not be put into the image: " + e.getCause().getMessage());
    } finally {
      uploads.release(hash);
      if (repacked != null) {
        uploads.deleteTemp(repacked);
      }
    }
  }

  /** Work that takes CPU rather than waits. */
  @FunctionalInterface
  private interface CpuWork<T> {
    T run() throws StepFailed, IOException;
  }

  /** Runs CPU-heavy work on {@link #cpu} and waits for it (a virtual thread waiting holds no carrier). */
  private <T> T onCpu(String name, CpuWork<T> work) throws StepFailed, IOException, InterruptedException {
    java.util.concurrent.Future<T> f = cpu.submit(work::run);
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      throw e;
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof StepFailed sf) {
        throw sf;
      }
      if (c instanceof IOException io) {
        throw io;
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new StepFailed(name, "step " + name + " failed: " + c);
    }
  }

  /** Where COPY stages its files in the step's container before placing them. */
  static final String STAGE = "/.sandboxes-copy";
  /**
   * Places staged COPY files ({@code $0} user, {@code $1} mode, then the targets): owned by the
   * user (and given the mode), directories COPY has to make owned by the user too, existing ones
   * left as they are, and the stage removed.
   */
  static final String COPY_SCRIPT = String.join("\n",
      "u=\"$0\"; m=\"$1\"; shift",
      "mk() { [ -e \"$1\" ] || { mk \"$(dirname \"$1\")\" && mkdir \"$1\" && chown \"$u\": \"$1\"; }; }",
      "chown -R \"$u\": " + STAGE + " && { [ -z \"$m\" ] || chmod -R \"$m\" " + STAGE + "; } || exit 1",
      "for t in \"$@\"; do",
      "  s=\"" + STAGE + "$t\"",
      "  mk \"$(dirname \"$t\")\" || exit 1",
      "  if [ -d \"$s\" ] && [ ! -L \"$s\" ]; then mk \"$t\" && cp -a \"$s/.\" \"$t/\" || exit 1",
      "  else cp -a \"$s\" \"$t\" || exit 1; fi",
      "done",
      "rm -rf " + STAGE);

  /**
   * The last commit: labels the image with the template and points the build's tags at it; an
   * earlier build that no tag points at any more goes.
   */
  private void register(Build b, String image, Defaults d) throws IOException {
    Map<String, String> labels = neutralLabels();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(LABEL_TEMPLATE_ID, b.request.templateId());
    labels.put(LABEL_TEMPLATE_NAME, b.request.name());
    labels.put(LABEL_TEMPLATE_BUILD, b.request.buildId());
    labels.put(LABEL_TEMPLATE_CREATED, Instant.now().toString());
    labels.put(LABEL_TEMPLATE_RESOURCES, b.request.cpuCount() + "/" + b.request.memoryMB());
    labels.put(LABEL_BUILT_BY, serverId);
    ObjectNode defaults = Json.object().put("workdir", d.workdir()).put("user", d.user());
    defaults.set("env", Json.toObject(d.env()));
    if (d.startCmd() != null) {
      defaults.put("startCmd", d.startCmd());
    }
    if (d.readyCmd() != null) {
      defaults.put("readyCmd", d.readyCmd());
    }
    labels.put(LABEL_TEMPLATE_DEFAULTS, Json.string(defaults));
    State st = new State(image, "/", "root");
    String id = createContainer(b, st, List.of("true"), "root", "/");
    registration.lock();
    try {
      if (templates.find(b.request.name()).isPresent()) {
        throw new IOException("the name '" + b.request.name() + "' was taken by a snapshot during the build");
      }
      String committed;
      try {
        committed = docker.client().commitCmd(id).withRepository(BUILD_REPOSITORY).withTag(b.request.buildId()).withLabels(labels)
            .exec();
      } finally {
        docker.remove(id);
        b.containers.remove(id);
      }
      // the registration itself: each tag moved from an earlier build at once
      for (String tag : b.request.tags()) {
        docker.client().tagImageCmd(committed, REPOSITORY, TemplateTags.registrationTag(b.request.templateId(), tag)).withForce(true).exec();
      }
      catalogue.forgetDefaults();
    } finally {
      registration.unlock();
    }
    // earlier builds no tag points at go in the background: the tags resolve to this build already
    runner.execute(() -> sweeper.sweepUntagged(b.request.templateId()));
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
   * @return false when there is no such template
   * @throws RpcError already_exists when a sandbox was created from it
   */
  public boolean delete(String idOrName, List<LocalSandbox> sandboxes) throws RpcError {
    return catalogue.delete(idOrName, sandboxes);
  }

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
    for (Requested r : requested.values()) {
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
    builds.values().forEach(b -> b.containers.forEach(docker::remove));
  }
}
