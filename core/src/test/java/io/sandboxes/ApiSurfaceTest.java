package io.sandboxes;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The public API names only our own API types and the JDK's: Jackson and the internal packages
 * stay implementation details a user never has to import (design: "Jackson internal only").
 */
class ApiSurfaceTest {

  @Test
  @DisplayName("no public signature in core's API packages mentions Jackson or an internal package")
  void noLeakedTypes() throws Exception {
    List<Class<?>> api = apiClasses();
    assertThat(api).as("classes found").hasSizeGreaterThan(30);
    List<String> leaks = new ArrayList<>();
    for (Class<?> c : api) {
      List<Type> types = new ArrayList<>();
      types.add(c.getGenericSuperclass());
      types.addAll(List.of(c.getGenericInterfaces()));
      for (Method m : c.getDeclaredMethods()) {
        if (visible(m.getModifiers()) && !m.isSynthetic()) {
          add(types, m);
          types.add(m.getGenericReturnType());
        }
      }
      for (Constructor<?> k : c.getDeclaredConstructors()) {
        if (visible(k.getModifiers())) {
          add(types, k);
        }
      }
      for (Field f : c.getDeclaredFields()) {
        if (visible(f.getModifiers())) {
          types.add(f.getGenericType());
        }
      }
      if (c.isRecord()) {
        for (RecordComponent rc : c.getRecordComponents()) {
          types.add(rc.getGenericType());
        }
      }
      for (Type t : types) {
        if (t != null && leaks(t.getTypeName())) {
          leaks.add(c.getName() + ": " + t.getTypeName());
        }
      }
    }
    assertThat(leaks).isEmpty();
  }

  private static void add(List<Type> types, Executable e) {
    types.addAll(List.of(e.getGenericParameterTypes()));
    types.addAll(List.of(e.getGenericExceptionTypes()));
  }

  private static boolean leaks(String typeName) {
    return typeName.contains("com.fasterxml.") || typeName.contains(".internal.");
  }

  private static boolean visible(int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  /** Public classes of io.sandboxes, io.sandboxes.e2b and io.sandboxes.spi, from the compiled output. */
  private static List<Class<?>> apiClasses() throws URISyntaxException, java.io.IOException, ClassNotFoundException {
    Path root = Path.of(Sandbox.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> out = new ArrayList<>();
    for (String pkg : List.of("io/sandboxes", "io/sandboxes/e2b", "io/sandboxes/spi")) {
      try (Stream<Path> files = Files.list(root.resolve(pkg))) {
        for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
          String name = pkg.replace('/', '.') + "." + f.getFileName().toString().replace(".class", "");
          if (name.endsWith("package-info")) {
            continue;
          }
          Class<?> c = Class.forName(name, false, ApiSurfaceTest.class.getClassLoader());
          if (visible(c.getModifiers()) && !c.isSynthetic() && !c.isAnonymousClass()) {
            out.add(c);
          }
        }
      }
    }
    return out;
  }
}
