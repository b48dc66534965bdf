package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.StructuredLog;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The server logs through {@link StructuredLog}, never SLF4J 2's fluent API, which a project on SLF4J 1.7 lacks. */
class StructuredLogUsageTest {
  private static final Pattern FLUENT = Pattern.compile("\\b\\w+\\.at(Trace|Debug|Info|Warn|Error)\\(\\)");

  @Test
  @DisplayName("no source file of the server calls the fluent API directly (StructuredLog itself excepted)")
  void noFluentCalls() throws IOException {
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java") && !p.endsWith("StructuredLog.java")).toList()) {
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          if (FLUENT.matcher(lines.get(i)).find()) {
            found.add(f + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      }
    }
    assertThat(found).isEmpty();
  }
}
