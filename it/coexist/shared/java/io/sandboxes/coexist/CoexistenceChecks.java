package io.sandboxes.coexist;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.junit.E2BSandbox;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What every coexistence project checks, beside its own library's test: {@code Sandboxes.local()}
 * runs, an {@code @E2BSandbox} test runs, and the class path holds exactly the libraries the
 * project asked for, of those that Sandboxes uses inside. Each project names the ones its own
 * dependencies bring in the {@code coexist.brought} system property (set in its pom); any other
 * found here came with Sandboxes, which is the leak this guards against, and any named but absent
 * means the list no longer describes the project.
 */
abstract class CoexistenceChecks {

  /**
   * The libraries that sandboxes-core and sandboxes-local use inside, each by one class of its.
   * A user's project may bring any of them itself, at any version: ours travel relocated in our
   * jars and must never reach the user's class path under these names.
   */
  static final Map<String, String> INSIDE = new LinkedHashMap<>();
  static {
    INSIDE.put("jackson-annotations", "com.fasterxml.jackson.annotation.JsonProperty");
    INSIDE.put("jackson-core", "com.fasterxml.jackson.core.JsonFactory");
    INSIDE.put("jackson-databind", "com.fasterxml.jackson.databind.ObjectMapper");
    INSIDE.put("commons-compress", "org.apache.commons.compress.archivers.tar.TarArchiveEntry");
    INSIDE.put("commons-io", "org.apache.commons.io.IOUtils");
    INSIDE.put("commons-lang3", "org.apache.commons.lang3.StringUtils");
    INSIDE.put("commons-codec", "org.apache.commons.codec.binary.Hex");
    INSIDE.put("testcontainers", "org.testcontainers.DockerClientFactory");
    INSIDE.put("docker-java", "com.github.dockerjava.api.DockerClient");
    INSIDE.put("jna", "com.sun.jna.Native");
    INSIDE.put("jetty", "org.eclipse.jetty.server.Server");
    INSIDE.put("duct-tape", "org.rnorth.ducttape.unreliables.Unreliables");
    INSIDE.put("jetbrains-annotations", "org.jetbrains.annotations.NotNull");
  }

  /** A sandbox for each test, the way a user's test asks for one. */
  @E2BSandbox
  Sandbox sandbox;

  @Test
  void anE2BSandboxTestRuns() {
    ExecResult python = sandbox.exec("python3 -c 'print(6 * 7)'");
    assertThat(python.exitCode()).as(python.stderr()).isZero();
    assertThat(python.stdout()).isEqualTo("42\n");
  }

  @Test
  void sandboxesLocalRuns() {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      ExecResult echo = sandboxes.sandbox().exec("echo coexists");
      assertThat(echo.exitCode()).as(echo.stderr()).isZero();
      assertThat(echo.stdout()).isEqualTo("coexists\n");
    }
  }

  @Test
  void theClassPathHasOnlyTheLibrariesTheProjectAskedFor() {
    String property = System.getProperty("coexist.brought");
    assertThat(property).as("the coexist.brought system property, set by the project's pom").isNotNull();
    Set<String> brought = Arrays.stream(property.split(",")).map(String::strip).filter(s -> !s.isEmpty())
        .collect(Collectors.toCollection(TreeSet::new));
    assertThat(INSIDE.keySet()).as("coexist.brought names only libraries of this list").containsAll(brought);

    List<String> leaked = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    INSIDE.forEach((library, probe) -> {
      String found = whereIs(probe);
      if (found != null && !brought.contains(library)) {
        leaked.add(library + " (" + probe + " from " + found + ")");
      } else if (found == null && brought.contains(library)) {
        missing.add(library);
      }
    });
    assertThat(leaked).as("libraries on the class path that the project did not ask for").isEmpty();
    assertThat(missing).as("libraries the project's own dependencies should bring (coexist.brought)").isEmpty();
  }

  /** Where a class comes from, or null when the class path does not have it. */
  static String whereIs(String className) {
    try {
      Class<?> type = Class.forName(className, false, CoexistenceChecks.class.getClassLoader());
      var source = type.getProtectionDomain().getCodeSource();
      return source == null ? "?" : String.valueOf(source.getLocation());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }
}
