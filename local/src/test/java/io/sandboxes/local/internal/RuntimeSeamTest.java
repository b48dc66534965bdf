package io.sandboxes.local.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The runtime seam holds in the compiled server: no class of the sandbox side, the HTTP layer,
 * egress, builds, the host tools or the seam itself refers to a Docker class (docker-java's, or
 * the docker package's, its egress enforcement included), so a second runtime can stand where
 * Docker stands; and neither the sandbox side nor egress carries how Docker enforces egress (its
 * tools, its chains, its resolver's address). Read from each class file's constant pool, where
 * every class a class uses and every text it holds is named.
 */
class RuntimeSeamTest {
  private static final Pattern DOCKER = Pattern.compile("(com/github/dockerjava/[A-Za-z0-9_/$]+|io/sandboxes/local/internal/docker/[A-Za-z0-9_$/]+)");
  /** The packages that must not use Docker's classes. */
  private static final List<String> PACKAGES = List.of("io/sandboxes/local/internal", "io/sandboxes/local/internal/egress",
      "io/sandboxes/local/internal/runtime", "io/sandboxes/local/internal/build", "io/sandboxes/local/internal/common",
      "io/sandboxes/local/internal/daemon", "io/sandboxes/local/internal/http", "io/sandboxes/local/internal/host");

  /** What Docker's egress enforcement is made of: its tools, its host chains and its embedded resolver. */
  private static final Pattern ENFORCEMENT = Pattern.compile("(nsenter|iptables|ip6tables|DOCKER-USER|127\\.0\\.0\\.11|physdev)");
  /** The packages that decide egress and ask for it, which must not know how Docker enforces it. */
  private static final List<String> POLICY_SIDE = List.of("io/sandboxes/local/internal", "io/sandboxes/local/internal/egress",
      "io/sandboxes/local/internal/runtime");

  @Test
  @DisplayName("outside the docker package, no server class uses a Docker class")
  void noDockerOutsideTheRuntime() throws IOException, URISyntaxException {
    Set<String> found = new TreeSet<>();
    int looked = scan(PACKAGES, DOCKER, found);
    assertThat(looked).as("class files looked at").isGreaterThan(100);
    assertThat(found).isEmpty();
  }

  @Test
  @DisplayName("egress and the sandbox side name none of Docker's enforcement: no nsenter, iptables, DOCKER-USER or 127.0.0.11")
  void noDockerEnforcementOnThePolicySide() throws IOException, URISyntaxException {
    Set<String> found = new TreeSet<>();
    int looked = scan(POLICY_SIDE, ENFORCEMENT, found);
    assertThat(looked).as("class files looked at").isGreaterThan(60);
    assertThat(found).isEmpty();
  }

  private static int scan(List<String> packages, Pattern pattern, Set<String> found) throws IOException, URISyntaxException {
    Path classes = Path.of(Registry.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    int looked = 0;
    for (String pkg : packages) {
      Path dir = classes.resolve(pkg);
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
          looked++;
          Matcher m = pattern.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
          while (m.find()) {
            found.add(classes.relativize(f) + " uses " + m.group(1));
          }
        }
      }
    }
    return looked;
  }
}
