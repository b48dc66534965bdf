package io.sandboxes.local.internal.docker;

import io.sandboxes.local.internal.runtime.CodeInterpreterTemplate;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import com.github.dockerjava.api.model.BuildResponseItem;
import io.sandboxes.SandboxException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code code-interpreter-v1} template's image: the base image plus Debian's ipykernel,
 * jupyter-client, numpy, pandas and matplotlib, and the bridge ({@code bridge.py}, ours) that
 * serves E2B's code-interpreter protocol on port {@value #PORT}.
 *
 * <p>Built with {@code docker build} from the local base image (no registry: the packages come
 * from the Debian mirror), once per machine: the tag carries a hash of the base image, the
 * packages and the bridge, so a built image is reused until one of them changes. The image's
 * {@value #LABEL_START} label is the command a sandbox made from it starts with.
 */
public final class CodeInterpreterImage {
  private static final Logger LOG = LoggerFactory.getLogger(CodeInterpreterImage.class);

  /** The template id E2B's code-interpreter SDKs ask for ({@link CodeInterpreterTemplate#TEMPLATE}). */
  public static final String TEMPLATE = CodeInterpreterTemplate.TEMPLATE;
  /** The other names the template answers to. */
  public static final Set<String> ALIASES = CodeInterpreterTemplate.ALIASES;
  public static final String REPOSITORY = "sandboxes-local/code-interpreter";
  /** The port the bridge listens on inside the sandbox, as E2B's. */
  public static final int PORT = CodeInterpreterTemplate.PORT;
  /** An image label holding the command (a JSON array) a sandbox made from the image starts with. */
  public static final String LABEL_START = CodeInterpreterTemplate.LABEL_START;
  /** An image label naming the template the image is. */
  public static final String LABEL_TEMPLATE_IMAGE = "io.sandboxes.template-image";
  static final String DIRECTORY = "/opt/sandboxes/code-interpreter";
  static final String BRIDGE_PATH = DIRECTORY + "/bridge.py";
  /**
   * The files of ours the image holds, all in {@link #DIRECTORY}: the bridge, the Python kernels'
   * rich-result formatters, and the bash, JavaScript, TypeScript, R and Java contexts (run with the
   * base image's bash and node, and with R, TypeScript's transpiler and the JDK from {@link
   * #PACKAGES}; the Java context's driver is compiled when the image is built).
   */
  static final List<String> FILES = List.of("bridge.py", "results.py", "kernels.py", "jskernel.js", "rkernel.R", "JavaKernel.java");
  static final List<String> PACKAGES = List.of(
      "python3-ipykernel", "python3-jupyter-client", "python3-numpy", "python3-pandas", "python3-matplotlib",
      // TypeScript contexts: the compiler's transpiler, for node (about 67 MB)
      "node-typescript",
      // R contexts (about 90 MB with what it needs) and Java contexts, JShell (about 270 MB), as
      // E2B's template carries R and a JDK
      "r-base-core", "openjdk-17-jdk-headless");
  /**
   * Small alternatives installed with {@link #PACKAGES} so that apt takes them for an either-or
   * dependency of python3-fonttools instead of the large first choice: python3-munkres instead of
   * python3-scipy (which would bring python3-pythran and with it gcc, g++, boost and the BLAS and
   * Python headers), python3-ufolib2 instead of python3-defcon.
   */
  static final List<String> ALTERNATIVES = List.of("python3-munkres", "python3-ufolib2");
  /**
   * What a local package of no files tells dpkg is installed, so apt does not bring it: each is a
   * hard dependency of one of {@link #PACKAGES} that no code the interpreter runs imports.
   * python3-debugpy (the kernel's debugger, and with it pydevd and gdb: the bridge serves no debug
   * protocol, and ipykernel runs without it), python3-tk (GUI backends; the pinned version
   * satisfies python3-pil.imagetk's {@code >=}) and python3-sympy (fontTools' symfont module).
   * Code that wants one installs the real package with apt in the sandbox.
   */
  static final List<String> STUBBED = List.of(
      "python3-debugpy", "python3-tk (= 3.11.2-3)", "python3-sympy");
  private static final ReentrantLock BUILDING = new ReentrantLock();

  private CodeInterpreterImage() {}

  static String dockerfile(String baseImage) {
    return "FROM " + baseImage + "\n"
        + "RUN mkdir -p /tmp/stubs/DEBIAN && printf '%s\\n' 'Package: sandboxes-code-interpreter-stubs' 'Version: 1'"
        + " 'Architecture: all' 'Maintainer: Sandboxes' 'Provides: " + String.join(", ", STUBBED) + "'"
        + " 'Description: stands in for dependencies the code interpreter never runs' > /tmp/stubs/DEBIAN/control"
        + " && dpkg-deb -b /tmp/stubs /tmp/stubs.deb >/dev/null && dpkg -i /tmp/stubs.deb && rm -rf /tmp/stubs /tmp/stubs.deb"
        + " && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
        // no fsync per unpacked file: a failed build leaves no image to be inconsistent
        + " -o Dpkg::Options::=--force-unsafe-io " + String.join(" ", PACKAGES) + " " + String.join(" ", ALTERNATIVES)
        + " && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin\n"
        + "COPY " + String.join(" ", FILES) + " " + DIRECTORY + "/\n"
        + "RUN chmod 0644 " + FILES.stream().map(f -> DIRECTORY + "/" + f).collect(java.util.stream.Collectors.joining(" "))
        + " && javac -nowarn -d " + DIRECTORY + "/java " + DIRECTORY + "/JavaKernel.java"
        + " && chmod -R a+rX " + DIRECTORY + "/java\n";
  }

  /**
   * The image's labels: ours, the template it serves, and its start command, the bridge, which
   * runs as root, as E2B's Jupyter server and kernels do (a context may work in {@code /root}).
   */
  static Map<String, String> labels() {
    return Map.of(DockerRuntime.LABEL_OURS, "true", LABEL_TEMPLATE_IMAGE, TEMPLATE,
        LABEL_START, "[\"python3\",\"" + BRIDGE_PATH + "\"]", CodeInterpreterTemplate.LABEL_START_USER, "root");
  }

  static byte[] file(String name) {
    try (InputStream in = CodeInterpreterImage.class.getResourceAsStream("/io/sandboxes/local/codeinterpreter/" + name)) {
      if (in == null) {
        throw new IllegalStateException(name + " is missing from the local runtime's jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** @return the image reference for a base image, e.g. {@code sandboxes-local/code-interpreter:1a2b3c4d5e} */
  public static String reference(String baseImage) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(dockerfile(baseImage).getBytes(StandardCharsets.UTF_8));
      sha.update(new java.util.TreeMap<>(labels()).toString().getBytes(StandardCharsets.UTF_8)); // set at build: a change is a new image
      for (String f : FILES) {
        sha.update(f.getBytes(StandardCharsets.UTF_8));
        sha.update(file(f));
      }
      return REPOSITORY + ":" + HexFormat.of().formatHex(sha.digest()).substring(0, 10);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Makes sure the image exists, building it from {@code baseImage} when it does not. Concurrent
   * callers in one JVM wait for one build.
   *
   * @param progress receives one line per build step
   * @return the image reference
   */
  public static String ensure(DockerRuntime docker, String baseImage, Consumer<String> progress) {
    String ref = reference(baseImage);
    if (docker.imageExists(ref)) {
      return ref;
    }
    BUILDING.lock();
    try {
      if (!docker.imageExists(ref)) {
        build(docker, baseImage, ref, progress);
      }
      return ref;
    } finally {
      BUILDING.unlock();
    }
  }

  private static void build(DockerRuntime docker, String baseImage, String ref, Consumer<String> progress) {
    long started = System.nanoTime();
    say(progress, "building the code interpreter image " + ref + " once from " + baseImage
        + "; this takes a minute or two (Debian packages: " + String.join(", ", PACKAGES) + ")");
    byte[] context = context(baseImage);
    StringBuilder last = new StringBuilder();
    try {
      String imageId = docker.client().buildImageCmd()
          .withTarInputStream(new ByteArrayInputStream(context))
          .withTags(Set.of(ref))
          .withLabels(labels())
          .withPull(false)
          .withRemove(true)
          .withForcerm(true)
          .exec(new BuildImageResultCallback() {
            @Override
            public void onNext(BuildResponseItem item) {
              if (item.getStream() != null && !item.getStream().isBlank()) {
                String line = item.getStream().strip();
                last.setLength(0);
                last.append(line);
                if (line.startsWith("Step ") || line.startsWith("Setting up python3-")) {
                  say(progress, "build: " + line);
                }
              }
              if (item.getErrorDetail() != null) {
                say(progress, "build error: " + item.getErrorDetail().getMessage());
              }
              super.onNext(item);
            }
          })
          .awaitImageId();
      LOG.debug("code interpreter image {} is {}", ref, imageId);
    } catch (RuntimeException e) {
      throw new SandboxException("building the code interpreter image failed: " + e.getMessage() + " (last output: " + last
          + "; it needs " + BaseImage.DEFAULT_MIRROR + " reachable from containers)", e);
    }
    if (!docker.imageExists(ref)) {
      throw new SandboxException("docker build reported success but " + ref + " does not exist");
    }
    say(progress, "built " + ref + " in " + (System.nanoTime() - started) / 1_000_000_000L + " s");
    // in the background: removing a 1.5 GB image can take minutes on a busy engine, and nothing waits for it
    Thread.ofVirtual().name("sandboxes-code-interpreter-cleanup").start(() -> {
      try {
        removeOlderBuilds(docker, ref, line -> LOG.info("{}", line));
      } catch (RuntimeException e) {
        LOG.debug("older code interpreter images stay: {}", e.toString());
      }
    });
  }

  private static byte[] context(String baseImage) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (TarArchiveOutputStream tar = new TarArchiveOutputStream(buf)) {
      add(tar, "Dockerfile", dockerfile(baseImage).getBytes(StandardCharsets.UTF_8));
      for (String f : FILES) {
        add(tar, f, file(f));
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return buf.toByteArray();
  }

  private static void add(TarArchiveOutputStream tar, String name, byte[] content) throws IOException {
    TarArchiveEntry e = new TarArchiveEntry(name);
    e.setSize(content.length);
    e.setMode(0644);
    tar.putArchiveEntry(e);
    tar.write(content);
    tar.closeArchiveEntry();
  }

  /** Older recipes' images go, unless something still uses them (Docker refuses, and they stay). */
  private static void removeOlderBuilds(DockerRuntime docker, String current, Consumer<String> progress) {
    BaseImage.removeOlderBuilds(docker, REPOSITORY, current, line -> say(progress, line));
  }

  private static void say(Consumer<String> progress, String line) {
    LOG.debug("[code interpreter image] {}", line);
    progress.accept(line);
  }
}
