package io.sandboxes;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Javadoc's {@code @since} names a release that this build is or came before, never a later one. */
class SinceTagsTest {
  private static final Pattern SINCE = Pattern.compile("@since\\s+(\\S+)");
  private static final Pattern PROJECT_VERSION = Pattern.compile("<artifactId>sandboxes-parent</artifactId>\\s*<version>(\\d+)\\.(\\d+)");

  @Test
  @DisplayName("every @since in the main sources of every module is at most this build's major.minor version")
  void sinceIsNotAhead() throws IOException {
    Path root = Path.of("..").toAbsolutePath().normalize();
    Matcher v = PROJECT_VERSION.matcher(Files.readString(root.resolve("pom.xml")));
    assertThat(v.find()).as("the parent pom's version").isTrue();
    int[] project = {Integer.parseInt(v.group(1)), Integer.parseInt(v.group(2))};
    List<String> ahead = new ArrayList<>();
    int seen = 0;
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")
          && !p.toString().contains("/target/")).toList()) {
        Matcher m = SINCE.matcher(Files.readString(f));
        while (m.find()) {
          seen++;
          String[] parts = m.group(1).split("\\.");
          int major = Integer.parseInt(parts[0]);
          int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
          if (major > project[0] || (major == project[0] && minor > project[1])) {
            ahead.add(root.relativize(f) + ": @since " + m.group(1));
          }
        }
      }
    }
    assertThat(seen).as("@since tags found").isGreaterThan(20);
    assertThat(ahead).as("@since ahead of version %d.%d", project[0], project[1]).isEmpty();
  }
}
