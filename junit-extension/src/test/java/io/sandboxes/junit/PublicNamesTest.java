package io.sandboxes.junit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A user imports our public types by simple name; two that share one force a fully qualified name
 * in user code (as {@code @E2BSandbox io.sandboxes.e2b.E2BSandbox sandbox} once did). This module's
 * test class path holds every library artifact (core, dsl, local, junit), so it checks them all.
 */
class PublicNamesTest {

  @Test
  @DisplayName("no two public top-level types of the library artifacts share a simple name")
  void simpleNamesAreUnique() throws Exception {
    Map<String, List<String>> byName = new TreeMap<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      for (String className : ourClasses(Path.of(entry))) {
        Class<?> c = Class.forName(className, false, getClass().getClassLoader());
        if (Modifier.isPublic(c.getModifiers()) && c.getEnclosingClass() == null) {
          byName.computeIfAbsent(c.getSimpleName(), k -> new ArrayList<>()).add(c.getName());
        }
      }
    }
    List<String> packages = byName.values().stream().flatMap(List::stream)
        .map(n -> n.substring(0, n.lastIndexOf('.'))).distinct().toList();
    assertThat(packages).as("packages scanned").contains("io.sandboxes", "io.sandboxes.e2b", "io.sandboxes.dsl",
        "io.sandboxes.junit", "io.sandboxes.local");
    assertThat(byName.values()).as("public types sharing a simple name").allSatisfy(names -> assertThat(names).hasSize(1));
  }

  /** The non-internal io.sandboxes classes in a class path entry: a folder of classes or a jar. */
  private static List<String> ourClasses(Path entry) throws IOException {
    List<String> files = new ArrayList<>();
    if (Files.isDirectory(entry)) {
      try (Stream<Path> walk = Files.walk(entry)) {
        walk.map(p -> entry.relativize(p).toString().replace(java.io.File.separatorChar, '/')).forEach(files::add);
      }
    } else if (entry.toString().endsWith(".jar") && entry.getFileName().toString().startsWith("sandboxes-")) {
      try (JarFile jar = new JarFile(entry.toFile())) {
        jar.stream().map(java.util.zip.ZipEntry::getName).forEach(files::add);
      }
    }
    boolean testClasses = entry.endsWith("test-classes");
    return files.stream()
        .filter(f -> !testClasses && f.startsWith("io/sandboxes/") && f.endsWith(".class") && !f.contains("$")
            && !f.contains("/internal/") && !f.endsWith("package-info.class") && !f.endsWith("module-info.class"))
        .map(f -> f.substring(0, f.length() - ".class".length()).replace('/', '.'))
        .toList();
  }
}
