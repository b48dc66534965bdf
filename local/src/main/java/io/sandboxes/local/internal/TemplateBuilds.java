package io.sandboxes.local.internal;

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
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
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
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
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
public final class TemplateBuilds implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TemplateBuilds.class);
  /** A template is registered by its image's tag here, {@code <repository>:<template id>}: moved by a rebuild, removed by a delete. */
  static final String REPOSITORY = "sandboxes-local/template";
  /** Every finished build's image is also tagged here by its build id, so taking the registration tag off never waits on layer removal. */
  static final String BUILD_REPOSITORY = "sandboxes-local/template-build";
  static final String LABEL_TEMPLATE_ID = "io.sandboxes.template-id";
  static final String LABEL_TEMPLATE_NAME = "io.sandboxes.template-name";
  static final String LABEL_TEMPLATE_BUILD = "io.sandboxes.template-build";
  static final String LABEL_TEMPLATE_CREATED = "io.sandboxes.template-created";
  /** The template's defaults for its sandboxes: {@code {env, workdir, user, startCmd, readyCmd}} as JSON. */
  static final String LABEL_TEMPLATE_DEFAULTS = "io.sandboxes.template-defaults";
  static final String LABEL_CACHE_KEY = "io.sandboxes.template-cache";
  /** Marks a build step's container with the server that runs it; a restarted server removes its leftovers. */
  static final String LABEL_BUILD_CONTAINER = "io.sandboxes.template-build-of";
  private static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9_.-]{0,62}$");
  private static final Pattern HASH = Pattern.compile("^[a-f0-9]{64}$");
  private static final Pattern ENV_KEY = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");
  private static final Pattern USER = Pattern.compile("^[a-z_][a-z0-9_-]{0,31}$|^[0-9]{1,9}$");
  /** The most an uploaded COPY context may hold. */
  public static final long MAX_UPLOAD = 1L << 30;
  /** The most log entries one build keeps; past it, one entry says lines were dropped. */
  static final int MAX_LOG_ENTRIES = 20_000;
  /** The longest a log entry's message is; a longer line is cut. */
  static final int MAX_LINE = 4096;
  /** The longest one build may run before it fails. */
  static final Duration BUILD_LIMIT = Duration.ofHours(1);
  static final Duration UPLOAD_LINK_LIFE = Duration.ofMinutes(30);

  /** A registered template as E2B lists it. */
  public record Built(String templateId, String name, String buildId, Instant createdAt, String imageId, Defaults defaults) {}

  /** What a built template gives its sandboxes. */
  public record Defaults(Map<String, String> env, String workdir, String user, @Nullable String startCmd, @Nullable String readyCmd) {}

  /** One build log line. */
  public record LogEntry(Instant timestamp, String level, String message, @Nullable String step) {}

  /** A build's status as the status endpoint reports it. */
  public record Status(String templateId, String buildId, String state, List<LogEntry> entries, @Nullable String reason,
      @Nullable String reasonStep, List<LogEntry> reasonEntries) {}

  /** A requested build: what {@code POST /v3/templates} answers. */
  public record Requested(String templateId, String buildId, String name, List<String> tags, int cpuCount, int memoryMB) {}

  private record UploadLink(String templateId, String hash, Instant until) {}

  private final class Build {
    final Requested request;
    volatile String state = "waiting";
    final List<LogEntry> log = new ArrayList<>();
    volatile @Nullable String reason;
    volatile @Nullable String reasonStep;
    final Set<String> containers = ConcurrentHashMap.newKeySet();
    volatile boolean cancelled;

    Build(Requested request) {
      this.request = request;
    }

    void log(String level, String message, @Nullable String step) {
      synchronized (log) {
        if (log.size() < MAX_LOG_ENTRIES) {
          String m = message.length() > MAX_LINE ? message.substring(0, MAX_LINE) + "…" : message;
          log.add(new LogEntry(Instant.now(), level, m, step));
        } else if (log.size() == MAX_LOG_ENTRIES) {
          log.add(new LogEntry(Instant.now(), "warn", "more than " + MAX_LOG_ENTRIES + " log lines; the rest are dropped", step));
        }
      }
    }
  }

  /** A step failed: the build stops with this message, naming the step. */
  private static final class StepFailed extends Exception {
    private static final long serialVersionUID = 1L;
    final String step;

    StepFailed(String step, String message) {
      super(message);
      this.step = step;
    }
  }

  private final DockerRuntime docker;
  private final Templates templates;
  private final Path files;
  private final String serverId;
  private final String baseImage;
  private final Map<String, Requested> requested = new ConcurrentHashMap<>();
  private final Map<String, Build> builds = new ConcurrentHashMap<>();
  private final Map<String, UploadLink> links = new ConcurrentHashMap<>();
  private final Map<String, Optional<Defaults>> defaultsCache = new ConcurrentHashMap<>();
  private final ExecutorService runner = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("template-build-", 0).factory());
  private final SecureRandom random = new SecureRandom();
  /** Held while a template is registered or deleted; a lock, not a monitor, so virtual threads waiting on Docker under it stay unpinned. */
  private final java.util.concurrent.locks.ReentrantLock registration = new java.util.concurrent.locks.ReentrantLock();

  public TemplateBuilds(DockerRuntime docker, Templates templates, Path files, String serverId, String baseImage) {
    this.docker = docker;
    this.templates = templates;
    this.files = files;
    this.serverId = serverId;
    this.baseImage = baseImage;
    removeLeftovers();
  }

  /** Removes the step containers a previous run of this server left (it stopped mid-build). */
  private void removeLeftovers() {
    try {
      for (Container c : docker.client().listContainersCmd().withShowAll(true)
          .withLabelFilter(Map.of(LABEL_BUILD_CONTAINER, serverId)).exec()) {
        LOG.info("removing template build container {} a previous run left", c.getId());
        docker.remove(c.getId());
      }
    } catch (RuntimeException e) {
      LOG.warn("could not look for template build containers a previous run left: {}", e.toString());
    }
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
    List<String> allTags = new ArrayList<>(tags);
    int colon = nameWithTag.indexOf(':');
    if (colon >= 0) {
      name = nameWithTag.substring(0, colon);
      allTags.add(nameWithTag.substring(colon + 1));
    }
    if (!NAME.matcher(name).matches() || name.equals(Templates.BASE)) {
      throw new RpcError("invalid_argument", "template name must be lowercase letters, digits, '_', '.' or '-' (and not 'base'), got '"
          + name + "'");
    }
    if (allTags.isEmpty()) {
      allTags.add("default");
    }
    if (cpuCount < 1 || cpuCount > 8 || memoryMB < 128 || memoryMB > 16_384) {
      throw new RpcError("invalid_argument", "cpuCount must be 1 to 8 and memoryMB 128 to 16384");
    }
    String finalName = name;
    String templateId = find(name).map(Built::templateId)
        .orElseGet(() -> requested.values().stream().filter(r -> r.name().equals(finalName)).map(Requested::templateId).findFirst()
            .orElseGet(() -> "tpl" + Registry.newSandboxId().substring(0, 17)));
    Requested r = new Requested(templateId, java.util.UUID.randomUUID().toString(), name, List.copyOf(allTags), cpuCount, memoryMB);
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
    return requested.values().stream().anyMatch(r -> r.templateId().equals(templateId)) || find(templateId).isPresent();
  }

  /**
   * Whether the files of a COPY are here already; when not, a token to upload them with.
   *
   * @return null when present, else the upload token
   */
  public @Nullable String fileLink(String templateId, String hash) throws RpcError {
    if (!HASH.matcher(hash).matches()) {
      throw new RpcError("invalid_argument", "files hash must be 64 lowercase hex digits, got '" + hash + "'");
    }
    if (!knownTemplate(templateId)) {
      throw new RpcError("not_found", "template '" + templateId + "' not found");
    }
    if (Files.isRegularFile(files.resolve(hash + ".tar"), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    byte[] raw = new byte[24];
    random.nextBytes(raw);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    Instant now = Instant.now();
    links.values().removeIf(l -> l.until().isBefore(now));
    links.put(token, new UploadLink(templateId, hash, now.plus(UPLOAD_LINK_LIFE)));
    return token;
  }

  /**
   * Stores an upload made with a token from {@link #fileLink}; at most {@link #MAX_UPLOAD} bytes.
   *
   * @throws RpcError unauthenticated for an unknown or expired token, invalid_argument for a body too large
   */
  public void upload(String templateId, String hash, @Nullable String token, InputStream body) throws RpcError, IOException {
    UploadLink link = token == null ? null : links.remove(token);
    if (link == null || !link.templateId().equals(templateId) || !link.hash().equals(hash) || link.until().isBefore(Instant.now())) {
      throw new RpcError("unauthenticated", "the upload link is unknown, used or expired");
    }
    Files.createDirectories(files);
    Path part = Files.createTempFile(files, hash, ".part");
    try {
      try (OutputStream out = Files.newOutputStream(part)) {
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        int n;
        while ((n = body.read(buf)) >= 0) {
          total += n;
          if (total > MAX_UPLOAD) {
            throw new RpcError("invalid_argument", "the upload is larger than " + MAX_UPLOAD + " bytes");
          }
          out.write(buf, 0, n);
        }
      }
      Files.move(part, files.resolve(hash + ".tar"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(part);
    }
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
    Build b = new Build(r);
    if (builds.putIfAbsent(buildId, b) != null) {
      throw new RpcError("already_exists", "build '" + buildId + "' was started already");
    }
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
    List<LogEntry> page;
    List<LogEntry> ofStep = new ArrayList<>();
    synchronized (b.log) {
      int from = Math.min(Math.max(offset, 0), b.log.size());
      page = List.copyOf(b.log.subList(from, Math.min(b.log.size(), from + limit)));
      String step = b.reasonStep;
      if (step != null) {
        b.log.stream().filter(e -> step.equals(e.step())).forEach(ofStep::add);
      }
    }
    return new Status(templateId, buildId, state, page, b.reason, b.reasonStep,
        List.copyOf(ofStep.subList(Math.max(0, ofStep.size() - 50), ofStep.size())));
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
    Instant began = Instant.now();
    Instant deadline = began.plus(BUILD_LIMIT);
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
      b.state = "ready";
      LOG.atInfo().addKeyValue("event", "template.built").addKeyValue("template", b.request.templateId())
          .addKeyValue("name", b.request.name()).addKeyValue("ms", Duration.between(began, Instant.now()).toMillis()).log("template built");
    } catch (StepFailed e) {
      b.log("error", e.getMessage(), e.step);
      b.reason = e.getMessage();
      b.reasonStep = e.step;
      b.state = "error";
    } catch (RuntimeException | IOException e) {
      LOG.warn("template build {} failed", b.request.buildId(), e);
      b.log("error", "the build failed: " + e.getMessage(), null);
      b.reason = "the build failed: " + e.getMessage();
      b.state = "error";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      b.reason = "the server stopped during the build";
      b.state = "error";
    } finally {
      b.containers.forEach(docker::remove);
    }
  }

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
      throw new StepFailed("base", "image '" + ref + "' is not in the local Docker, and the local runtime pulls nothing: "
          + "pull or build it first (docker pull " + ref + "), or start from a template");
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
        String dir = args.get(0).startsWith("/") ? args.get(0) : st.workdir.replaceAll("/+$", "") + "/" + args.get(0);
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

  private @Nullable String cached(String key) {
    // a step's image is the parent of the next one's: only a listing of all images shows it
    List<Image> hits = docker.client().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_CACHE_KEY, key)).exec();
    return hits.isEmpty() ? null : hits.get(0).getId();
  }

  /** The labels every image and container of a build carries, blanking what a base image may have passed on. */
  private Map<String, String> neutralLabels() {
    Map<String, String> l = new HashMap<>();
    l.put(Templates.LABEL_SNAPSHOT_ID, "");
    l.put(LABEL_TEMPLATE_ID, "");
    l.put(LABEL_TEMPLATE_NAME, "");
    l.put(LABEL_TEMPLATE_DEFAULTS, "");
    l.put(LABEL_CACHE_KEY, "");
    l.put(DockerRuntime.LABEL_SANDBOX_ID, "");
    l.put(DockerRuntime.LABEL_ENVD_TOKEN, "");
    l.put(WarmPool.LABEL_POOL, "");
    l.put(Registry.LABEL_FORK_OF, "");
    l.put(Registry.LABEL_FORK_IMAGE, "");
    return l;
  }

  private String createContainer(Build b, State st, List<String> cmd, String user, String workdir) {
    Map<String, String> labels = neutralLabels();
    labels.put(LABEL_BUILD_CONTAINER, serverId);
    List<String> env = new ArrayList<>();
    st.env.forEach((k, v) -> env.add(k + "=" + v));
    HostConfig host = HostConfig.newHostConfig()
        .withNanoCPUs(b.request.cpuCount() * 1_000_000_000L)
        .withMemory(b.request.memoryMB() * 1024L * 1024L)
        .withPidsLimit(4096L)
        .withInit(true);
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
      String hit = cached(key);
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
      docker.client().startContainerCmd(id).exec();
      logs = docker.client().logContainerCmd(id).withFollowStream(true).withStdOut(true).withStdErr(true)
          .exec(new ResultCallback.Adapter<Frame>() {
            private final StringBuilder partial = new StringBuilder();

            @Override
            public void onNext(Frame f) {
              String text = new String(f.getPayload(), StandardCharsets.UTF_8);
              String level = f.getStreamType() == com.github.dockerjava.api.model.StreamType.STDERR ? "warn" : "info";
              partial.append(text);
              int nl;
              while ((nl = partial.indexOf("\n")) >= 0) {
                b.log(level, partial.substring(0, nl), name);
                partial.delete(0, nl + 1);
              }
              if (partial.length() > MAX_LINE) {
                b.log(level, partial.toString(), name);
                partial.setLength(0);
              }
            }

            @Override
            public void onComplete() {
              if (!partial.isEmpty()) {
                b.log("info", partial.toString(), name);
              }
              super.onComplete();
            }
          });
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
      st.image = docker.client().commitCmd(id).withLabels(labels).exec();
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

  /**
   * COPY {@code src dest [user] [mode]}: the files of {@code src} from the uploaded context,
   * re-packed under {@code dest} (a {@code dest} ending in {@code /}, or a directory {@code src},
   * receives the contents), owned by the user. A path outside the context is refused.
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
    String rel = normalizeSource(name, src);
    if (!dest.startsWith("/")) {
      dest = st.workdir.replaceAll("/+$", "") + "/" + dest;
    }
    if (dest.contains("\0") || Path.of(dest).normalize().toString().contains("..")) {
      throw new StepFailed(name, "COPY destination '" + args.get(1) + "' is not a plain path");
    }
    if (!USER.matcher(user).matches() || !mode.matches("^[0-7]{0,4}$")) {
      throw new StepFailed(name, "COPY user or mode is malformed");
    }
    if (hash == null || !HASH.matcher(hash).matches()) {
      throw new StepFailed(name, "COPY needs the filesHash of its uploaded files");
    }
    Path tar = files.resolve(hash + ".tar");
    if (!Files.isRegularFile(tar, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      throw new StepFailed(name, "the files of COPY " + src + " were not uploaded (hash " + hash + ")");
    }
    Path repacked = Files.createTempFile(files, "copy-", ".tar");
    try {
      List<String> targets = repack(name, tar, repacked, rel, dest);
      if (targets.isEmpty()) {
        throw new StepFailed(name, "COPY " + src + ": no files of that path were uploaded");
      }
      List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", COPY_SCRIPT, user, mode));
      cmd.addAll(targets);
      String finalDest = dest;
      runContainer(b, st, name, cmd, "root", "/", id -> {
        try (InputStream in = Files.newInputStream(repacked)) {
          docker.client().copyArchiveToContainerCmd(id).withRemotePath("/").withTarInputStream(in).exec();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, deadline, cacheKey(st, "COPY", List.of(rel, finalDest, user, mode), hash), force);
    } catch (java.io.UncheckedIOException e) {
      throw new StepFailed(name, "COPY " + src + " could not be put into the image: " + e.getCause().getMessage());
    } finally {
      Files.deleteIfExists(repacked);
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

  /** A COPY source as a plain relative path inside the context, or the step fails. */
  static String normalizeSource(String name, String src) throws StepFailed {
    if (src.isEmpty() || src.startsWith("/") || src.contains("\\") || src.contains("\0")) {
      throw new StepFailed(name, "COPY source '" + src + "' is outside the build context: it must be a relative path inside it");
    }
    List<String> parts = new ArrayList<>();
    for (String p : src.split("/+")) {
      if (p.equals("..")) {
        throw new StepFailed(name, "COPY source '" + src + "' is outside the build context: '..' is refused");
      }
      if (!p.isEmpty() && !p.equals(".")) {
        parts.add(p);
      }
    }
    String rel = String.join("/", parts);
    if (rel.matches(".*[*?\\[].*")) {
      throw new StepFailed(name, "COPY source '" + src + "': glob patterns are not supported by the local runtime");
    }
    return rel;
  }

  /**
   * Writes the entries of {@code tar} under {@code rel} to {@code out}, placed under {@code dest}.
   * Only files, directories and symbolic links pass (a link is kept as a link, inside the image);
   * an entry whose path leaves the context is refused.
   *
   * @return the top-level paths written, to own and chmod
   */
  private static List<String> repack(String name, Path tar, Path out, String rel, String dest) throws StepFailed, IOException {
    Set<String> targets = new LinkedHashSet<>();
    boolean destIsDir = dest.endsWith("/");
    String destBase = dest.replaceAll("/+$", "");
    try (InputStream raw = new BufferedInputStream(Files.newInputStream(tar));
        TarArchiveInputStream in = new TarArchiveInputStream(gunzipIfNeeded(raw));
        TarArchiveOutputStream o = new TarArchiveOutputStream(Files.newOutputStream(out))) {
      o.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
      o.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
      TarArchiveEntry e;
      while ((e = in.getNextEntry()) != null) {
        String path = e.getName().replaceAll("^(\\./)+", "").replaceAll("/+$", "");
        if (path.isEmpty()) {
          continue;
        }
        for (String p : path.split("/")) {
          if (p.equals("..")) {
            throw new StepFailed(name, "the uploaded files hold a path outside the context: " + e.getName());
          }
        }
        if (path.startsWith("/")) {
          throw new StepFailed(name, "the uploaded files hold an absolute path: " + e.getName());
        }
        String target;
        if (rel.isEmpty()) {
          target = destBase + "/" + path;
        } else if (path.equals(rel)) {
          target = e.isDirectory() || !destIsDir ? destBase : destBase + "/" + rel.substring(rel.lastIndexOf('/') + 1);
        } else if (path.startsWith(rel + "/")) {
          target = destBase + "/" + path.substring(rel.length() + 1);
        } else {
          continue;
        }
        if (target.isEmpty()) {
          target = "/";
        }
        if (!(e.isFile() || e.isDirectory() || e.isSymbolicLink())) {
          continue;
        }
        TarArchiveEntry copy;
        if (e.isSymbolicLink()) {
          copy = new TarArchiveEntry(STAGE.substring(1) + target, TarArchiveEntry.LF_SYMLINK);
          copy.setLinkName(e.getLinkName());
        } else {
          copy = new TarArchiveEntry(STAGE.substring(1) + target + (e.isDirectory() ? "/" : ""));
          copy.setSize(e.isFile() ? e.getSize() : 0);
        }
        copy.setMode(e.getMode());
        copy.setModTime(e.getModTime());
        o.putArchiveEntry(copy);
        if (e.isFile()) {
          in.transferTo(o);
        }
        o.closeArchiveEntry();
        targets.add(topLevel(target, destBase));
      }
    }
    return new ArrayList<>(targets);
  }

  private static String topLevel(String target, String destBase) {
    if (target.equals(destBase) || destBase.isEmpty()) {
      return target.equals("") ? "/" : target;
    }
    String rest = target.substring(destBase.length() + 1);
    int slash = rest.indexOf('/');
    return destBase + "/" + (slash < 0 ? rest : rest.substring(0, slash));
  }

  private static InputStream gunzipIfNeeded(InputStream in) throws IOException {
    in.mark(2);
    int a = in.read();
    int b = in.read();
    in.reset();
    return a == 0x1f && b == 0x8b ? new GZIPInputStream(in, 64 * 1024) : in;
  }

  /** The last commit: labels the image with the template, replacing an earlier build of the same name. */
  private void register(Build b, String image, Defaults d) throws IOException {
    Map<String, String> labels = neutralLabels();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(LABEL_TEMPLATE_ID, b.request.templateId());
    labels.put(LABEL_TEMPLATE_NAME, b.request.name());
    labels.put(LABEL_TEMPLATE_BUILD, b.request.buildId());
    labels.put(LABEL_TEMPLATE_CREATED, Instant.now().toString());
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
      Optional<Built> previous = find(b.request.name());
      String committed;
      try {
        committed = docker.client().commitCmd(id).withRepository(BUILD_REPOSITORY).withTag(b.request.buildId()).withLabels(labels)
            .exec();
      } finally {
        docker.remove(id);
        b.containers.remove(id);
      }
      // the registration itself: one tag, moved from an earlier build at once
      docker.client().tagImageCmd(committed, REPOSITORY, b.request.templateId()).withForce(true).exec();
      defaultsCache.clear();
      // the earlier build goes in the background: the name resolves to the newest build already
      previous.filter(p -> !p.imageId().equals(committed)).ifPresent(p -> runner.execute(() -> removeQuietly(p.imageId())));
    } finally {
      registration.unlock();
    }
  }

  private void removeQuietly(String imageId) {
    try {
      docker.client().removeImageCmd(imageId).withForce(false).exec();
    } catch (ConflictException e) {
      // a sandbox still runs from the earlier build; the newer one is what the name resolves to
      LOG.info("the earlier build {} stays while a sandbox uses it", imageId);
    } catch (RuntimeException e) {
      LOG.warn("the earlier build {} could not be removed: {}", imageId, e.toString());
    }
  }

  // ---- registered templates ----

  /** @return every built template, newest first (one per id: its newest build) */
  public List<Built> list() {
    List<Image> images = docker.client().listImagesCmd().withLabelFilter(Map.of(DockerRuntime.LABEL_OURS, "true")).exec();
    Map<String, Built> byId = new LinkedHashMap<>();
    images.stream().map(TemplateBuilds::builtOf).flatMap(Optional::stream)
        .sorted(Comparator.comparing(Built::createdAt).reversed())
        .forEach(t -> byId.putIfAbsent(t.templateId(), t));
    return List.copyOf(byId.values());
  }

  private static Optional<Built> builtOf(Image i) {
    Map<String, String> l = i.getLabels();
    if (l == null || l.getOrDefault(LABEL_TEMPLATE_ID, "").isEmpty() || l.getOrDefault(LABEL_TEMPLATE_NAME, "").isEmpty()) {
      return Optional.empty();
    }
    // only the image tagged with the template's id is the template: an earlier build, a deleted one or one half-made is not
    String registration = REPOSITORY + ":" + l.get(LABEL_TEMPLATE_ID);
    if (i.getRepoTags() == null || !java.util.Arrays.asList(i.getRepoTags()).contains(registration)) {
      return Optional.empty();
    }
    try {
      JsonNode d = Json.parse(l.getOrDefault(LABEL_TEMPLATE_DEFAULTS, "{}").getBytes(StandardCharsets.UTF_8));
      Defaults defaults = new Defaults(Json.stringMap(d.get("env")), d.path("workdir").asText("/home/user"), d.path("user").asText("user"),
          Json.text(d, "startCmd"), Json.text(d, "readyCmd"));
      return Optional.of(new Built(l.get(LABEL_TEMPLATE_ID), l.get(LABEL_TEMPLATE_NAME), l.getOrDefault(LABEL_TEMPLATE_BUILD, ""),
          Instant.parse(l.getOrDefault(LABEL_TEMPLATE_CREATED, Instant.EPOCH.toString())), i.getId(), defaults));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** A built template by its id or its name (a {@code name:tag} is its name). */
  public Optional<Built> find(String idOrName) {
    String n = idOrName.contains(":") ? idOrName.substring(0, idOrName.indexOf(':')) : idOrName;
    return list().stream().filter(t -> t.templateId().equals(n) || t.name().equals(n)).findFirst();
  }

  /** @return the image of a built template, or null */
  public @Nullable String resolve(String idOrName) {
    return find(idOrName).map(Built::imageId).orElse(null);
  }

  /** The defaults a template gives its sandboxes; empty for base and snapshots. */
  public Optional<Defaults> defaults(String templateId) {
    if (templateId.equals(Templates.BASE)) {
      return Optional.empty();
    }
    // looked up outside the map's lock: a Docker call must not hold it (nor pin a virtual thread's carrier)
    Optional<Defaults> known = defaultsCache.get(templateId);
    if (known == null) {
      known = find(templateId).map(Built::defaults);
      defaultsCache.put(templateId, known);
    }
    return known;
  }

  /**
   * Deletes a built template, every build of it.
   *
   * @return false when there is no such template
   * @throws RpcError already_exists when a sandbox was created from it
   */
  public boolean delete(String idOrName, List<LocalSandbox> sandboxes) throws RpcError {
    registration.lock();
    try {
      Optional<Built> t = find(idOrName);
      if (t.isEmpty()) {
        return false;
      }
      for (LocalSandbox s : sandboxes) {
        Optional<Built> of = find(s.templateId());
        if (of.isPresent() && of.get().templateId().equals(t.get().templateId())) {
          throw new RpcError("already_exists", "cannot delete template " + t.get().name() + ": sandbox " + s.id() + " ("
              + (s.paused() ? "paused" : "running") + ") was created from it");
        }
      }
      try {
        // the image keeps its build tag, so this only unregisters: it never waits on layers
        docker.client().removeImageCmd(REPOSITORY + ":" + t.get().templateId()).withForce(false).exec();
      } catch (NotFoundException e) {
        return false;
      } catch (ConflictException e) {
        throw new RpcError("already_exists", "template " + t.get().name() + " is in use: " + e.getMessage());
      }
      defaultsCache.clear();
      String templateId = t.get().templateId();
      runner.execute(() -> {
        for (Image i : docker.client().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_TEMPLATE_ID, templateId)).exec()) {
          removeQuietly(i.getId());
        }
      });
      return true;
    } finally {
      registration.unlock();
    }
  }

  /** How long a sandbox of a template with a {@code readyCmd} may take to become ready. */
  public static final Duration READY_LIMIT = Duration.ofSeconds(60);

  /**
   * Runs a built template's {@code startCmd} in the background of a new sandbox, as the template's
   * user in its workdir, then its {@code readyCmd} until that exits 0.
   *
   * @throws RpcError when the start command cannot start, or the sandbox is not ready within {@link #READY_LIMIT}
   */
  public void startCommands(LocalSandbox s, Defaults d) throws RpcError {
    if (d.startCmd() != null && !d.startCmd().isBlank()) {
      SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
      SandboxProcess p = s.start(new LocalSandbox.StartSpec(d.user(), "/bin/bash", List.of("-l", "-c", d.startCmd()), s.envVars(),
          d.workdir(), "start-cmd", false, 0, 0, false, Duration.ZERO), sub);
      p.unsubscribe(sub[0]); // nobody reads it: its output is dropped, as a background process's is
      s.log("info", "start command started: " + d.startCmd());
    }
    if (d.readyCmd() == null || d.readyCmd().isBlank()) {
      return;
    }
    Instant until = Instant.now().plus(READY_LIMIT);
    int last = -1;
    try {
      while (Instant.now().isBefore(until)) {
        SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
        SandboxProcess p = s.start(new LocalSandbox.StartSpec(d.user(), "/bin/bash", List.of("-l", "-c", d.readyCmd()), s.envVars(),
            d.workdir(), null, false, 0, 0, false, Duration.ZERO), sub);
        p.unsubscribe(sub[0]);
        if (p.awaitEnd(Duration.between(Instant.now(), until).plusMillis(1)) && p.end() != null) {
          last = p.end().exitCode();
          if (last == 0) {
            s.log("info", "ready command succeeded: " + d.readyCmd());
            return;
          }
        }
        Thread.sleep(200); // the ready command's own pace, as E2B polls it
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new RpcError("unavailable", "the template's ready command '" + d.readyCmd() + "' did not succeed within "
        + READY_LIMIT.toSeconds() + " s (last exit code " + (last < 0 ? "unknown" : Integer.toString(last)) + ")");
  }

  @Override
  public void close() {
    builds.values().forEach(b -> b.cancelled = true);
    runner.shutdownNow();
    try {
      runner.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    builds.values().forEach(b -> b.containers.forEach(docker::remove));
  }
}
