package io.sandboxes.local.internal.docker;

import io.sandboxes.SandboxException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code base} template's image: Debian with bash, coreutils, tar, curl, python3 with pip and
 * venv, Node.js, procps, git and a {@code user} account (uid 1000, home {@code /home/user}), like
 * E2B's base template.
 *
 * <p>No registry is needed: the root filesystem is built from Debian packages with
 * {@code debootstrap} and imported with {@code docker import}. The tag carries a hash of the
 * recipe, so a built image is reused until the recipe changes. Building needs root and
 * debootstrap, and takes about a minute; progress goes to the log and to the given listener.
 */
public final class BaseImage {
  private static final Logger LOG = LoggerFactory.getLogger(BaseImage.class);

  public static final String REPOSITORY = "sandboxes-local/base";
  public static final String SUITE = "bookworm";
  public static final String DEFAULT_MIRROR = "http://deb.debian.org/debian";
  static final List<String> PACKAGES = List.of(
      "bash", "coreutils", "tar", "curl", "python3", "procps", "ca-certificates", "findutils", "sudo", "git",
      // what else E2B's base template (python:3.11 plus Node) gives that Debian packages cheaply
      "python3-pip", "python3-venv", "nodejs");
  /** Commands run in the new root filesystem after debootstrap, as root. */
  static final List<String> SETUP = List.of(
      "useradd --create-home --uid 1000 --shell /bin/bash user",
      "printf 'user ALL=(ALL:ALL) NOPASSWD: ALL\\n' > /etc/sudoers.d/user && chmod 0440 /etc/sudoers.d/user",
      // every command runs in a login shell (bash -l, as E2B's envd starts them), and Debian's
      // /etc/profile asks `id -u` for the uid to choose the PATH: a fork and an exec, about 1.5 ms
      // of the shell's 3.5. bash knows it already ($EUID, the effective uid `id -u` prints); a
      // shell without it (dash, for sh -l) still asks id. The PATH each user gets is the same
      "sed -i 's/\"$(id -u)\"/\"${EUID:-$(id -u)}\"/g' /etc/profile && grep -q 'EUID:-' /etc/profile",
      "apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin");

  private BaseImage() {}

  /** @return the image reference of the current recipe, e.g. {@code sandboxes-local/base:bookworm-1a2b3c4d} */
  public static String reference() {
    return REPOSITORY + ":" + tag();
  }

  static String tag() {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update((SUITE + "\n" + String.join(",", PACKAGES) + "\n" + String.join("\n", SETUP)).getBytes(StandardCharsets.UTF_8));
      return SUITE + "-" + HexFormat.of().formatHex(sha.digest()).substring(0, 10);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Makes sure the image exists, building it when it does not.
   *
   * @param progress receives one line per step while building
   * @return the image reference
   */
  public static String ensure(DockerRuntime docker, Consumer<String> progress) {
    String ref = reference();
    if (docker.imageExists(ref)) {
      return ref;
    }
    build(docker, progress);
    return ref;
  }

  /**
   * The first line a build prints. It may be the first thing a new user sees from the local
   * runtime, after a silence, so it says what is happening, that it happens once, and how long
   * it takes (debootstrap and import measured at about 40 s on a fast mirror).
   */
  static String firstProgressLine(String mirror) {
    return "building the base image " + reference() + " once; this takes about a minute (Debian " + SUITE
        + " packages from " + mirror + "), and later starts reuse it";
  }

  private static void build(DockerRuntime docker, Consumer<String> progress) {
    String mirror = mirror();
    say(progress, firstProgressLine(mirror));
    debootstrapImage(docker, SUITE, PACKAGES, SETUP, REPOSITORY, tag(), "the base image", mirror, progress);
    removeOlderBuilds(docker, progress);
  }

  private static String mirror() {
    return System.getenv().getOrDefault("SANDBOXES_DEBIAN_MIRROR", DEFAULT_MIRROR);
  }

  /** Where plain Debian suites built here for templates' {@code fromImage("debian:<suite>")} go. */
  public static final String DEBIAN_REPOSITORY = "sandboxes-local/debian";

  /**
   * Makes sure a plain Debian suite (debootstrap's minimal variant, as {@code debian:<suite>} is
   * on Docker Hub, with nothing added) exists as {@code sandboxes-local/debian:<suite>}, building
   * it from the Debian mirror when it does not: what a template's {@code fromImage("debian:...")}
   * stands for here, where no registry is reached.
   *
   * @param suite a suite debootstrap knows, e.g. {@code bookworm} or {@code trixie}
   * @param progress receives one line per step while building
   * @return the image reference
   * @throws IllegalArgumentException when debootstrap does not know the suite
   */
  public static String ensureDebian(DockerRuntime docker, String suite, Consumer<String> progress) {
    if (!suite.matches("[a-z]{2,20}") || !Files.isRegularFile(Path.of("/usr/share/debootstrap/scripts", suite))) {
      throw new IllegalArgumentException("'" + suite + "' is not a Debian suite debootstrap knows here (e.g. bookworm, trixie)");
    }
    String ref = DEBIAN_REPOSITORY + ":" + suite;
    if (docker.imageExists(ref)) {
      return ref;
    }
    synchronized (BaseImage.class) { // two builds asking at once build it once
      if (!docker.imageExists(ref)) {
        debootstrapImage(docker, suite, List.of(), List.of("apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin"),
            DEBIAN_REPOSITORY, suite, "Debian " + suite, mirror(), progress);
      }
    }
    return ref;
  }

  /** Builds a root filesystem with debootstrap, runs the setup in it, and imports it into Docker. */
  private static void debootstrapImage(DockerRuntime docker, String suite, List<String> include, List<String> setup, String repository,
      String tag, String what, String mirror, Consumer<String> progress) {
    Path work;
    try {
      work = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "sandboxes-rootfs-");
    } catch (IOException e) {
      throw new SandboxException("cannot make a folder to build " + what + " in", e);
    }
    Path rootfs = work.resolve("rootfs");
    String ref = repository + ":" + tag;
    long started = System.nanoTime();
    try {
      List<String> debootstrap = new ArrayList<>(List.of("debootstrap", "--variant=minbase"));
      if (!include.isEmpty()) {
        debootstrap.add("--include=" + String.join(",", include));
      }
      debootstrap.addAll(List.of(suite, rootfs.toString(), mirror));
      int[] steps = {0};
      runLogged(debootstrap, line -> {
        steps[0]++;
        if (line.startsWith("I: Retrieving") || line.startsWith("I: Validating")) {
          if (steps[0] % 20 == 0) {
            say(progress, "debootstrap: " + line.substring(3));
          }
        } else {
          say(progress, "debootstrap: " + line.replaceFirst("^[IWE]: ", ""));
        }
      });
      for (String step : setup) {
        say(progress, "setup: " + step);
        runLogged(List.of("chroot", rootfs.toString(), "/bin/sh", "-c", step), line -> say(progress, "setup: " + line));
      }
      say(progress, "importing the root filesystem into Docker as " + ref);
      Path tarFile = work.resolve("rootfs.tar");
      runLogged(List.of("tar", "--numeric-owner", "-C", rootfs.toString(), "-cf", tarFile.toString(), "."), line -> say(progress, "tar: " + line));
      docker.importImage(tarFile, repository, tag);
      if (!docker.imageExists(ref)) {
        throw new SandboxException("docker import reported success but " + ref + " does not exist");
      }
      say(progress, "built " + ref + " in " + (System.nanoTime() - started) / 1_000_000_000L + " s");
    } catch (IOException e) {
      throw new SandboxException("building " + what + " failed: " + e.getMessage()
          + " (it needs root, debootstrap and access to a Debian mirror; set SANDBOXES_DEBIAN_MIRROR to use another)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("building " + what + " was interrupted", e);
    } finally {
      deleteTree(work);
    }
  }

  /** Older recipes' images go, unless something still uses them (Docker refuses, and they stay). */
  private static void removeOlderBuilds(DockerRuntime docker, Consumer<String> progress) {
    removeOlderBuilds(docker, REPOSITORY, reference(), line -> say(progress, line));
  }

  /**
   * Removes the images of {@code repository} other than {@code current}, unless something still
   * uses them (Docker refuses, and they stay); shared with the code interpreter's image.
   */
  static void removeOlderBuilds(DockerRuntime docker, String repository, String current, Consumer<String> progress) {
    for (com.github.dockerjava.api.model.Image image : docker.client().listImagesCmd().withImageNameFilter(repository).exec()) {
      String[] tags = image.getRepoTags();
      if (tags == null || java.util.Arrays.asList(tags).contains(current)) {
        continue;
      }
      for (String t : tags) {
        if (t.startsWith(repository + ":")) {
          try {
            docker.client().removeImageCmd(t).exec();
            progress.accept("removed the outdated " + t);
          } catch (RuntimeException e) {
            LOG.debug("kept {}: {}", t, e.toString());
          }
        }
      }
    }
  }

  private static void say(Consumer<String> progress, String line) {
    LOG.debug("[base image] {}", line);
    progress.accept(line);
  }

  private static void runLogged(List<String> command, Consumer<String> lines) throws IOException, InterruptedException {
    Process p = io.sandboxes.local.internal.host.HostTools.command(command.get(0), command.subList(1, command.size()))
        .redirectErrorStream(true).start();
    List<String> tail = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        lines.accept(line);
        tail.add(line);
        if (tail.size() > 20) {
          tail.remove(0);
        }
      }
    }
    int code = p.waitFor();
    if (code != 0) {
      throw new IOException("'" + String.join(" ", command) + "' exited with " + code + ":\n" + String.join("\n", tail));
    }
  }

  private static void deleteTree(Path dir) {
    try {
      // rootfs holds device nodes and root-owned files: rm handles them where Files.walk would not
      io.sandboxes.local.internal.host.HostTools.command("rm", List.of("-rf", "--one-file-system", dir.toString())).inheritIO().start()
          .waitFor();
    } catch (IOException e) {
      LOG.warn("could not remove {}: {}", dir, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
