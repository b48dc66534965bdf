package io.sandboxes.local.internal.build;

import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.build.TemplateService.Defaults;
import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a started build: its base (a template, a snapshot or an image the runtime has), its
 * steps in order (ENV, WORKDIR and USER carried in its {@link BuildState}, RUN and COPY as
 * steps committed to images), then its registration; a build that fails or is cancelled leaves no
 * template and removes the step images it made.
 */
final class BuildRunner {
  private static final Logger LOG = LoggerFactory.getLogger(BuildRunner.class);
  static final Pattern HASH = Pattern.compile("^[a-f0-9]{64}$");
  private static final Pattern ENV_KEY = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");
  static final Pattern USER = Pattern.compile("^[a-z_][a-z0-9_-]{0,31}$|^[0-9]{1,9}$");

  private final BuildRuntime runtime;
  private final KnownTemplates templates;
  private final TemplateCatalogue catalogue;
  private final BuildUploads uploads;
  private final StepRunner stepRunner;
  private final CopyStep copies;
  private final TemplateRegistration registration;
  private final String baseImage;
  /** Every build of this server's run: a failed build keeps what a running one goes on from. */

  BuildRunner(BuildRuntime runtime, KnownTemplates templates, TemplateCatalogue catalogue, BuildUploads uploads, StepRunner stepRunner,
      CopyStep copies, TemplateRegistration registration, String baseImage) {
    this.runtime = runtime;
    this.templates = templates;
    this.catalogue = catalogue;
    this.uploads = uploads;
    this.stepRunner = stepRunner;
    this.copies = copies;
    this.registration = registration;
    this.baseImage = baseImage;
  }

  void run(Build b, BuildStart start) {
    List<BuildStart.Step> steps = start.steps();
    boolean force = start.force();
    b.state = "building";
    // the build refers to its COPY steps' uploads from its start: none is swept before its step comes
    List<String> refers = new ArrayList<>();
    for (BuildStart.Step step : steps) {
      String h = step.filesHash();
      if ("COPY".equals(step.type()) && h != null && HASH.matcher(h).matches()) {
        uploads.hold(h);
        refers.add(h);
      }
    }
    Instant began = Instant.now();
    Instant deadline = began.plus(TemplateService.BUILD_LIMIT);
    // the outcome is published after the cleanup: a retry polled into starting must not find this build's images about to go
    String outcome = "error";
    try {
      BuildState st = base(b, start.fromImage(), start.fromTemplate());
      for (int i = 0; i < steps.size(); i++) {
        if (b.cancelled) {
          throw new StepFailed(Integer.toString(i + 1), "the build was cancelled");
        }
        step(b, st, i + 1, steps.size(), steps.get(i), force, deadline);
      }
      Defaults d = new Defaults(st.env, st.workdir, st.user, start.startCmd(), start.readyCmd());
      b.log("info", BuildLines.heading(false, BuildLines.FINALIZE, "Finalizing template build", StepRunner.cacheKey(st, "FINALIZE",
          List.of(String.valueOf(start.startCmd()), String.valueOf(start.readyCmd())), null)), "finalize");
      registration.register(b, st.image, d);
      b.log("info", BuildLines.finished(Duration.between(began, Instant.now())), null);
      outcome = "ready";
      StructuredLog.atInfo(LOG).addKeyValue("event", "template.built").addKeyValue("template", b.request.templateId())
          .addKeyValue("name", b.request.name()).addKeyValue("ms", Duration.between(began, Instant.now()).toMillis()).log("template built");
    } catch (StepFailed e) {
      b.log("error", BuildLines.failed(e.getMessage()), null);
      b.reason = e.getMessage();
      b.reasonStep = e.step;
    } catch (RuntimeException | IOException e) {
      LOG.warn("template build {} failed", b.request.buildId(), e);
      b.log("error", BuildLines.failed(String.valueOf(e.getMessage())), null);
      b.reason = "the build failed: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      b.reason = "the server stopped during the build";
    } finally {
      b.steps.forEach(runtime::removeStep);
      if (!outcome.equals("ready")) {
        // a build that did not finish leaves no images: what it committed is no template's cache, unless a running build uses it
        stepRunner.discard(b);
      }
      refers.forEach(uploads::release);
      b.finishedAt = Instant.now();
      b.state = outcome;
    }
  }

  /** {@code debian:<suite>} or {@code debian:<suite>-slim}: a plain Debian suite, built here when it is not in the local Docker. */
  private static final java.util.regex.Pattern DEBIAN = java.util.regex.Pattern.compile("(?:docker\\.io/)?(?:library/)?debian:([a-z]+)(?:-slim)?");

  private BuildState base(Build b, @Nullable String fromImage, @Nullable String fromTemplate) throws StepFailed {
    if (fromTemplate != null) {
      String image = templates.resolve(fromTemplate);
      if (image == null) {
        throw new StepFailed("base", "template '" + fromTemplate + "' not found: a local build starts from base, a built template or a"
            + " snapshot");
      }
      String id = imageId(image);
      // a template is taken as it is, never built again: E2B logs it CACHED too
      b.log("info", BuildLines.heading(true, BuildLines.BASE, "FROM TEMPLATE " + fromTemplate, hashOf(id)), "base");
      Optional<Defaults> d = catalogue.defaults(fromTemplate);
      BuildState st = new BuildState(id, d.map(Defaults::workdir).orElse("/home/user"), d.map(Defaults::user).orElse("user"));
      d.ifPresent(x -> st.env.putAll(x.env()));
      return st;
    }
    String ref = java.util.Objects.requireNonNull(fromImage);
    if (ref.equals("e2bdev/base") || ref.equals("e2bdev/base:latest")) {
      if (!runtime.imageExists(ref)) {
        String id = imageId(baseImage);
        b.log("info", BuildLines.heading(true, BuildLines.BASE, "FROM " + ref, hashOf(id)), "base");
        b.log("info", "E2B's base image stands here for the local base template (" + baseImage + ")", "base");
        return new BuildState(id, "/home/user", "user");
      }
    }
    Optional<BuildRuntime.ImageConfig> found = runtime.inspect(ref);
    boolean builtHere = found.isEmpty();
    if (found.isEmpty()) {
      java.util.regex.Matcher debian = DEBIAN.matcher(ref);
      if (!debian.matches()) {
        throw new StepFailed("base", "image '" + ref + "' is not in the local Docker, and the local runtime pulls nothing: "
            + "pull or build it first (docker pull " + ref + "), or start from a template or a Debian suite (debian:<suite>)");
      }
      String built;
      try {
        b.log("info", "image " + ref + " is not in the local Docker: Debian " + debian.group(1)
            + " is built here from the Debian mirror with debootstrap (once per machine, about a minute)", "base");
        built = runtime.ensureDebian(debian.group(1), line -> b.log("info", line, "base"));
      } catch (IllegalArgumentException | io.sandboxes.SandboxException failed) {
        throw new StepFailed("base", "image '" + ref + "' is not in the local Docker and could not be built here: " + failed.getMessage());
      }
      found = runtime.inspect(built);
      if (found.isEmpty()) {
        throw new StepFailed("base", "the image built for '" + ref + "' (" + built + ") is gone");
      }
    }
    BuildRuntime.ImageConfig img = found.get();
    // an image in the local Docker is taken as it is (CACHED); one built here just now is not
    b.log("info", BuildLines.heading(!builtHere, BuildLines.BASE, "FROM " + ref, hashOf(img.id())), "base");
    String user = img.user() == null || img.user().isEmpty() ? "root" : img.user();
    String dir = img.workdir() == null || img.workdir().isEmpty() ? "/" : img.workdir();
    BuildState st = new BuildState(img.id(), dir, user);
    for (String kv : img.env()) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        st.env.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return st;
  }

  private String imageId(String ref) {
    return runtime.imageId(ref);
  }

  /** An image's id as a base heading's hash: its digest, without the algorithm's name. */
  private static String hashOf(String imageId) {
    return imageId.startsWith("sha256:") ? imageId.substring("sha256:".length()) : imageId;
  }

  private void step(Build b, BuildState st, int number, int total, BuildStart.Step step, boolean force, Instant deadline)
      throws StepFailed, IOException, InterruptedException {
    String type = java.util.Objects.requireNonNull(step.type());
    List<String> args = new ArrayList<>(step.args());
    String hash = step.filesHash();
    String name = Integer.toString(number);
    // the heading joins all the arguments, as E2B's does: a RUN's user and a COPY's user and mode come after its paths
    StepRunner.Heading h = new StepRunner.Heading(name, BuildLines.step(number, total), BuildLines.text(type, args));
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
        // a step that only changes the build's state makes no layer here: never CACHED
        b.log("info", BuildLines.heading(false, h.prefix(), h.text(), StepRunner.cacheKey(st, type, args, null)), name);
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
        // a runtime may make the directory when a step starts in it; make it now, as E2B does
        stepRunner.runStep(b, st, h, List.of("/bin/sh", "-c", "mkdir -p \"$0\"", st.workdir), "root", "/", null, deadline,
            StepRunner.cacheKey(st, "WORKDIR", List.of(st.workdir), null), force);
      }
      case "USER" -> {
        if (args.size() != 1 || !USER.matcher(args.get(0)).matches()) {
          throw new StepFailed(name, "USER needs one user name");
        }
        st.user = args.get(0);
        b.log("info", BuildLines.heading(false, h.prefix(), h.text(), StepRunner.cacheKey(st, type, args, null)), name);
      }
      case "RUN" -> {
        if (args.isEmpty() || args.get(0).isBlank()) {
          throw new StepFailed(name, "RUN needs a command");
        }
        String user = args.size() > 1 && !args.get(1).isEmpty() ? args.get(1) : st.user;
        if (!USER.matcher(user).matches()) {
          throw new StepFailed(name, "RUN user '" + user + "' is not a user name");
        }
        try {
          stepRunner.runStep(b, st, h, List.of("/bin/sh", "-c", args.get(0)), user, st.workdir, null, deadline,
              StepRunner.cacheKey(st, "RUN", args, null), force || step.force());
        } catch (StepFailed f) {
          if (f.unknownUser) { // E2B's words: its envd refuses the user when the command starts
            throw new StepFailed(name, "failed to run command '" + args.get(0) + "': command failed: unauthenticated: invalid username: '"
                + user + "'");
          }
          throw f;
        }
      }
      case "COPY" -> copies.copy(b, st, h, args, hash, force || step.force(), deadline);
      default -> throw new StepFailed(name, "unknown step type " + type);
    }
  }
}
