package io.sandboxes.template;

import static io.sandboxes.template.Checks.joined;
import static io.sandboxes.template.Checks.packageList;
import static io.sandboxes.template.Checks.requireText;
import static io.sandboxes.template.Checks.requireUser;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox template to build, as E2B's v2 SDK's {@code Template()}: a base (another template or
 * an image), then steps, then the command its sandboxes start with. Immutable: each method returns
 * a new template with one more step, so a template can be shared and extended.
 *
 * {@snippet :
 * Template t = Template.fromTemplate("base")
 *     .withContextDir(Path.of("src/main/sandbox"))         // where copy() reads from
 *     .aptInstall("git")                                   // RUN as root
 *     .copy("app", "/home/user/app")                       // a folder, owned by the user in effect
 *     .setEnvs(Map.of("APP_MODE", "demo"))
 *     .setWorkdir("/home/user/app")
 *     .runCmd("python3 -m compileall -q .");
 * BuildInfo built = e2b.buildTemplate(t, "my-app", BuildOptions.defaults().onLog(System.out::println));
 * }
 *
 * <p>The steps are E2B's five: {@code COPY}, {@code ENV}, {@code RUN}, {@code WORKDIR},
 * {@code USER}. The install helpers are {@code RUN} steps that run as {@code root}; like any RUN
 * with its own user, they leave the user in effect as it was. A {@code copy} source is a path
 * relative to the context directory and may not leave it: an absolute path or one with {@code ..}
 * past the top is refused here, and a source reached through a symbolic link out of the context is
 * refused at build time, before anything is sent. Symbolic links inside a copied folder are copied
 * as links, never followed.
 *
 * @since 0.1
 */
public final class Template {
  /** The image E2B's SDK starts from by default; the local runtime reads it as its base template. */
  public static final String E2B_BASE_IMAGE = "e2bdev/base";

  private final TemplateParts p;

  private Template(TemplateParts parts) {
    this.p = parts;
  }

  /**
   * Starts from a template the server has: {@code base}, a built template's alias or id, or a
   * snapshot.
   *
   * @param template the template's alias or id
   * @return a template with no steps yet, its context directory the working directory
   */
  public static Template fromTemplate(String template) {
    return new Template(TemplateParts.base(null, requireText(template, "template"), null));
  }

  /**
   * Starts from a container image, e.g. {@code python:3.12-slim}. On E2B's cloud it is pulled
   * from its registry; the local runtime pulls nothing, so it must be in the local Docker already.
   *
   * @param image the image reference
   * @return a template with no steps yet, its context directory the working directory
   */
  public static Template fromImage(String image) {
    return new Template(TemplateParts.base(requireText(image, "image"), null, null));
  }

  /**
   * Starts from E2B's base image, {@value #E2B_BASE_IMAGE}, as E2B's {@code fromBaseImage()}
   * (the local runtime reads it as its own base).
   *
   * @return a template with no steps yet
   */
  public static Template fromBaseImage() {
    return fromImage(E2B_BASE_IMAGE);
  }

  /**
   * Starts from an image in a private registry, signing in with credentials, as E2B's
   * {@code fromImage(image, {username, password})}, {@code fromAWSRegistry} and
   * {@code fromGCPRegistry}. The credentials go to the server in the build's start request
   * ({@code fromImageRegistry}) and nowhere else. The local runtime refuses such a build.
   *
   * @param image the image reference
   * @param credentials how to sign in
   * @return a template with no steps yet, its context directory the working directory
   */
  public static Template fromImage(String image, RegistryCredentials credentials) {
    Objects.requireNonNull(credentials, "credentials");
    return new Template(TemplateParts.base(requireText(image, "image"), null, credentials));
  }

  /**
   * Starts from a Dockerfile's text, as E2B's {@code fromDockerfile}: its one {@code FROM} image is
   * the base, and {@code RUN} (shell or exec form), {@code COPY} and {@code ADD} of local files
   * (with {@code --chown}, {@code --chmod}), {@code ENV}, {@code ARG} (as an environment variable),
   * {@code WORKDIR}, {@code USER}, and {@code CMD} or {@code ENTRYPOINT} (the start command, with a
   * 20 second ready wait) become steps. {@code EXPOSE} and {@code VOLUME} mean nothing to a sandbox
   * and are skipped, as E2B skips them. The steps run as {@code root} in {@code /} as in Docker;
   * when the Dockerfile sets no user or workdir, E2B's {@code user} and {@code /home/user} follow.
   * Anything else is refused rather than dropped: other instructions, several stages,
   * {@code COPY --from}, {@code ADD} of a URL or an archive, {@code RUN} flags, heredocs, and
   * {@code $} substitution outside {@code RUN}.
   *
   * @param dockerfile the Dockerfile's text; copy sources are read from the working directory
   * @return the template
   * @throws IllegalArgumentException for an instruction or form it cannot take, naming its line
   */
  public static Template fromDockerfile(String dockerfile) {
    return DockerfileSteps.parse(requireText(dockerfile, "dockerfile"), Path.of("").toAbsolutePath().normalize());
  }

  /**
   * Starts from a Dockerfile file, its folder the context directory.
   *
   * @param dockerfile the Dockerfile
   * @return the template
   * @throws IllegalArgumentException for an instruction or form it cannot take, naming its line
   * @throws java.io.UncheckedIOException when the file cannot be read
   * @see #fromDockerfile(String)
   */
  public static Template fromDockerfile(Path dockerfile) {
    return DockerfileSteps.parse(Objects.requireNonNull(dockerfile, "dockerfile"));
  }

  private Template plus(TemplateStep.Type type, List<String> args, boolean forceUpload) {
    return new Template(p.withSteps(Checks.append(p.steps(), new TemplateStep(type, args, p.skipCacheFromHere() || forceUpload,
        forceUpload))));
  }

  /**
   * Sets the folder {@link #copy} sources are read from and relative to.
   *
   * @param dir an existing folder; a relative one is resolved against the working directory now
   * @return a copy with it
   */
  public Template withContextDir(Path dir) {
    return new Template(p.withContextDir(Objects.requireNonNull(dir, "dir").toAbsolutePath().normalize()));
  }

  /**
   * Leaves files out of every COPY, as E2B's {@code Template({fileIgnorePatterns})}: a file or
   * folder under the context directory whose path (relative to it, {@code /}-separated) matches a
   * pattern is neither hashed nor sent. The patterns are globs as in {@link #copy(String, String)}:
   * {@code node_modules} drops that folder's own entry only, {@code node_modules/**} all of it. As
   * with E2B, the context's {@code .dockerignore} lines are added at build time ({@code !} refused).
   *
   * @param patterns the patterns, replacing any set before; relative, none blank nor negated
   * @return a copy with them
   */
  public Template withFileIgnorePatterns(List<String> patterns) {
    return new Template(p.withIgnorePatterns(Checks.ignorePatterns(patterns)));
  }

  /**
   * Returns the patterns of files left out of every COPY (the context's {@code .dockerignore} not
   * included).
   *
   * @return an unmodifiable list, empty when none were set
   */
  public List<String> fileIgnorePatterns() {
    return p.ignorePatterns();
  }

  /**
   * Installs Debian packages: {@code apt-get update}, then a non-interactive
   * {@code apt-get install -y}, as {@code root}.
   *
   * @param packages one or more package names (a {@code name=version} too)
   * @return a template with the RUN step added
   */
  public Template aptInstall(String... packages) {
    return install(PackageInstall.apt(packages));
  }

  /**
   * Installs packages with the options of E2B's {@code aptInstall}, {@code pipInstall},
   * {@code npmInstall} and {@code bunInstall}: one RUN step, as root when the install is system-wide.
   *
   * @param install what to install and how, e.g. {@code PackageInstall.npm("typescript").global()}
   * @return a template with the RUN step added
   */
  public Template install(PackageInstall install) {
    String user = Objects.requireNonNull(install, "install").runAs();
    return user == null ? runCmd(install.command()) : runCmd(install.command(), user);
  }

  /**
   * Installs Python packages system-wide with {@code pip install}, as {@code root}.
   *
   * @param packages one or more requirement specifiers, e.g. {@code requests==2.32.3}
   * @return a template with the RUN step added
   */
  public Template pipInstall(String... packages) {
    return runCmd("pip install " + packageList(packages), "root");
  }

  /**
   * Installs Node packages globally with {@code npm install -g}, as {@code root}.
   *
   * @param packages one or more package names, e.g. {@code typescript@5}
   * @return a template with the RUN step added
   */
  public Template npmInstall(String... packages) {
    return runCmd("npm install -g " + packageList(packages), "root");
  }

  /**
   * Runs a shell command ({@code /bin/sh -c}) as the user in effect, in the workdir in effect.
   *
   * @param command the command, not blank
   * @return a template with the RUN step added
   */
  public Template runCmd(String command) {
    return plus(TemplateStep.Type.RUN, List.of(requireText(command, "command")), false);
  }

  /**
   * Runs a shell command as the given user, for this step only.
   *
   * @param command the command, not blank
   * @param user the user to run it as, e.g. {@code root}
   * @return a template with the RUN step added
   */
  public Template runCmd(String command, String user) {
    return plus(TemplateStep.Type.RUN, List.of(requireText(command, "command"), requireUser(user)), false);
  }

  /**
   * Runs several commands in one step, joined with {@code &&} so the first failure stops it.
   *
   * @param commands one or more commands, none blank
   * @return a template with the RUN step added
   */
  public Template runCmd(List<String> commands) {
    return runCmd(joined(commands));
  }

  /**
   * Runs several commands in one step as the given user, joined with {@code &&}.
   *
   * @param commands one or more commands, none blank
   * @param user the user to run them as
   * @return a template with the RUN step added
   */
  public Template runCmd(List<String> commands, String user) {
    return runCmd(joined(commands), user);
  }

  /**
   * Copies a file or a whole folder from the context directory into the image, owned by the user
   * in effect. A folder's contents land in {@code dest}; a file lands at {@code dest}, or inside
   * it when {@code dest} ends in {@code /}. As with E2B, {@code src} may be a glob pattern such as
   * {@code src/*.txt} or {@code **}{@code /*.py}: its matches, found without following a symbolic
   * link, are sent by their paths in the context, and the server places them under {@code dest}
   * from the folder before the pattern on. Files matching {@link #withFileIgnorePatterns} are left out.
   *
   * @param src a path or glob pattern relative to the context directory, inside it
   * @param dest where it goes in the image; a relative path is taken from the workdir in effect
   * @return a template with the COPY step added
   * @throws IllegalArgumentException when {@code src} is absolute or leaves the context directory
   */
  public Template copy(String src, String dest) {
    return copy(src, dest, CopyOptions.defaults());
  }

  /**
   * Copies a file or a whole folder, with an owner, a mode or a forced upload.
   *
   * @param src a path relative to the context directory, inside it
   * @param dest where it goes in the image
   * @param options owner, mode and upload
   * @return a template with the COPY step added
   * @throws IllegalArgumentException when {@code src} is absolute or leaves the context directory
   * @see #copy(String, String)
   */
  public Template copy(String src, String dest, CopyOptions options) {
    return plus(TemplateStep.Type.COPY, Checks.copyArgs(src, dest, Objects.requireNonNull(options, "options")), options.forceUpload());
  }

  /**
   * Copies several sources to one destination, one COPY step each, as E2B's {@code copy} with an
   * array of sources.
   *
   * @param sources paths or glob patterns, each checked as {@link #copy(String, String)} checks it
   * @param dest where they go in the image; end it in {@code /} for files to land inside it
   * @param options owner, mode and upload, the same for each
   * @return a template with the COPY steps added
   */
  public Template copy(List<String> sources, String dest, CopyOptions options) {
    return copyItems(Checks.copyItems(sources, dest, options));
  }

  /**
   * Copies several sources, one COPY step each, as E2B's {@code copyItems}.
   *
   * @param items the copies, in order; each checked as {@link #copy(String, String, CopyOptions)} checks it
   * @return a template with the COPY steps added
   */
  public Template copyItems(List<CopyItem> items) {
    Template t = this;
    for (CopyItem item : Checks.nonEmpty(items, "item")) {
      t = t.copy(Objects.requireNonNull(item, "item").src(), item.dest(), item.options());
    }
    return t;
  }

  /**
   * Removes files ({@code rm}), as E2B's {@code remove}: a RUN step.
   *
   * @param paths one or more paths in the image
   * @param options {@code force}, {@code recursive} and {@code user}
   * @return a template with the RUN step added
   * @throws IllegalArgumentException for a mode, which remove takes none of
   */
  public Template remove(List<String> paths, FileStepOptions options) {
    return fileStep(FileSteps.remove(paths, Objects.requireNonNull(options, "options")), options.user());
  }

  /**
   * Removes a file ({@code rm}); a folder needs {@link FileStepOptions#withRecursive()}.
   *
   * @param path a path in the image
   * @return a template with the RUN step added
   */
  public Template remove(String path) {
    return remove(List.of(Objects.requireNonNull(path, "path")), FileStepOptions.defaults());
  }

  /**
   * Moves or renames a file or folder ({@code mv}), as E2B's {@code rename}: a RUN step.
   *
   * @param src the path to move
   * @param dest where it goes
   * @param options {@code force} and {@code user}
   * @return a template with the RUN step added
   */
  public Template rename(String src, String dest, FileStepOptions options) {
    return fileStep(FileSteps.rename(src, dest, Objects.requireNonNull(options, "options")), options.user());
  }

  /**
   * Moves or renames a file or folder ({@code mv}).
   *
   * @param src the path to move
   * @param dest where it goes
   * @return a template with the RUN step added
   */
  public Template rename(String src, String dest) {
    return rename(src, dest, FileStepOptions.defaults());
  }

  /**
   * Makes folders with their parents ({@code mkdir -p}), as E2B's {@code makeDir}: a RUN step.
   *
   * @param paths one or more paths in the image
   * @param options {@code mode} and {@code user}
   * @return a template with the RUN step added
   */
  public Template makeDir(List<String> paths, FileStepOptions options) {
    return fileStep(FileSteps.makeDir(paths, Objects.requireNonNull(options, "options")), options.user());
  }

  /**
   * Makes a folder with its parents ({@code mkdir -p}).
   *
   * @param path a path in the image
   * @return a template with the RUN step added
   */
  public Template makeDir(String path) {
    return makeDir(List.of(Objects.requireNonNull(path, "path")), FileStepOptions.defaults());
  }

  /**
   * Makes a symbolic link at {@code link} pointing at {@code target} ({@code ln -s}), as E2B's
   * {@code makeSymlink(src, dest)}: a RUN step.
   *
   * @param target what the link points at, as stored in the link
   * @param link where the link is made
   * @param options {@code force} (replace what is at {@code link}) and {@code user}
   * @return a template with the RUN step added
   */
  public Template makeSymlink(String target, String link, FileStepOptions options) {
    return fileStep(FileSteps.makeSymlink(target, link, Objects.requireNonNull(options, "options")), options.user());
  }

  /**
   * Makes a symbolic link at {@code link} pointing at {@code target} ({@code ln -s}).
   *
   * @param target what the link points at
   * @param link where the link is made
   * @return a template with the RUN step added
   */
  public Template makeSymlink(String target, String link) {
    return makeSymlink(target, link, FileStepOptions.defaults());
  }

  /**
   * Clones a git repository ({@code git clone}), as E2B's {@code gitClone}: a RUN step. The image
   * needs git, and the build needs to reach the repository.
   *
   * @param url the repository's URL
   * @param path where to clone it, or {@code null} for git's default (a folder named after the
   *     repository in the workdir in effect)
   * @param options branch, depth and user
   * @return a template with the RUN step added
   */
  public Template gitClone(String url, @Nullable String path, GitCloneOptions options) {
    return fileStep(FileSteps.gitClone(url, path, Objects.requireNonNull(options, "options")), options.user());
  }

  /**
   * Clones a git repository into a path, its default branch with all of history.
   *
   * @param url the repository's URL
   * @param path where to clone it
   * @return a template with the RUN step added
   */
  public Template gitClone(String url, String path) {
    return gitClone(url, Objects.requireNonNull(path, "path"), GitCloneOptions.defaults());
  }

  private Template fileStep(String command, @Nullable String user) {
    return user == null ? runCmd(command) : runCmd(command, user);
  }

  /**
   * Sets environment variables for the steps after this one and for the template's sandboxes.
   *
   * @param envs names and values; an empty map adds no step
   * @return a template with the ENV step added
   */
  public Template setEnvs(Map<String, String> envs) {
    Objects.requireNonNull(envs, "envs");
    if (envs.isEmpty()) {
      return this;
    }
    return plus(TemplateStep.Type.ENV, Checks.envArgs(envs), false);
  }

  /**
   * Sets one environment variable for the steps after this one and for the template's sandboxes.
   *
   * @param name the variable's name
   * @param value its value
   * @return a template with the ENV step added
   */
  public Template setEnv(String name, String value) {
    return setEnvs(Checks.oneEnv(name, value));
  }

  /**
   * Sets the working directory for the steps after this one and for the template's sandboxes,
   * making it when missing.
   *
   * @param workdir an absolute path, or one relative to the workdir in effect
   * @return a template with the WORKDIR step added
   */
  public Template setWorkdir(String workdir) {
    return plus(TemplateStep.Type.WORKDIR, List.of(requireText(workdir, "workdir")), false);
  }

  /**
   * Sets the user for the steps after this one and for the template's sandboxes.
   *
   * @param user a user that exists in the image
   * @return a template with the USER step added
   */
  public Template setUser(String user) {
    return plus(TemplateStep.Type.USER, List.of(requireUser(user)), false);
  }

  /**
   * Sets the command each sandbox of the template starts in the background, and the command that
   * says it is ready: a create answers once {@code readyCmd} exits 0.
   *
   * @param startCmd the start command, e.g. {@code python3 -m http.server 8000}
   * @param readyCmd the ready check, e.g. {@code curl -fs localhost:8000}
   * @return a copy with both
   */
  public Template setStartCmd(String startCmd, String readyCmd) {
    return new Template(p.withCommands(requireText(startCmd, "startCmd"), requireText(readyCmd, "readyCmd")));
  }

  /**
   * Sets only the ready check: a create answers once it exits 0.
   *
   * @param readyCmd the ready check
   * @return a copy with it
   */
  public Template setReadyCmd(String readyCmd) {
    return new Template(p.withCommands(p.startCmd(), requireText(readyCmd, "readyCmd")));
  }

  /**
   * Sets the start command and its ready check made by a {@link ReadyCmd} helper.
   *
   * @param startCmd the start command
   * @param ready the ready check, e.g. {@link ReadyCmd#waitForPort(int)}
   * @return a copy with both
   */
  public Template setStartCmd(String startCmd, ReadyCmd ready) {
    return setStartCmd(startCmd, Objects.requireNonNull(ready, "ready").command());
  }

  /**
   * Sets only the ready check, made by a {@link ReadyCmd} helper.
   *
   * @param ready the ready check
   * @return a copy with it
   */
  public Template setReadyCmd(ReadyCmd ready) {
    return setReadyCmd(Objects.requireNonNull(ready, "ready").command());
  }

  /**
   * Rebuilds every step added after this call instead of taking it from the server's cache, as
   * E2B's {@code skipCache()}. To rebuild every step, build with
   * {@link BuildOptions#withSkipCache()}.
   *
   * @return a copy whose next steps are forced
   */
  public Template skipCache() {
    return new Template(p.skippingCache());
  }

  /**
   * Returns the image it starts from.
   *
   * @return the image, or {@code null} when it starts from a template
   */
  public @Nullable String fromImage() {
    return p.fromImage();
  }

  /**
   * Returns the template it starts from.
   *
   * @return the template, or {@code null} when it starts from an image
   */
  public @Nullable String fromTemplate() {
    return p.fromTemplate();
  }

  /**
   * Returns the credentials for the base image's registry.
   *
   * @return them, or {@code null} when the base needs none
   */
  public @Nullable RegistryCredentials registryCredentials() {
    return p.registry();
  }

  /**
   * Returns the folder copy sources are read from.
   *
   * @return an absolute, normalized path
   */
  public Path contextDir() {
    return p.contextDir();
  }

  /**
   * Returns the steps, in order.
   *
   * @return an unmodifiable list; step {@code n} of the build's log is element {@code n - 1}
   */
  public List<TemplateStep> steps() {
    return p.steps();
  }

  /**
   * Returns the start command.
   *
   * @return the command, or {@code null} when none was set
   */
  public @Nullable String startCmd() {
    return p.startCmd();
  }

  /**
   * Returns the ready check.
   *
   * @return the command, or {@code null} when none was set
   */
  public @Nullable String readyCmd() {
    return p.readyCmd();
  }

  @Override
  public String toString() {
    return "Template[from " + (p.fromImage() != null ? "image " + p.fromImage() : "template " + p.fromTemplate()) + ", " + p.steps().size()
        + " steps]";
  }
}
