package io.sandboxes.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The class path is on the JUnit line this build was asked for: Jupiter (API and engine) at that
 * version, and the Platform (launcher, engine, commons) at its partner version (1.x for Jupiter
 * 5.x, the same version from 6.0 on). Surefire runs whatever launcher it finds, so without this a
 * build could pass on a line it never ran.
 */
class JUnitLineTest {

  @Test
  void classPathIsOnTheRequestedLine() throws ClassNotFoundException {
    String jupiter = System.getProperty("junit.line");
    assertThat(jupiter).as("the junit.line system property, set by the pom").isNotBlank();
    String platform = jupiter.startsWith("5.") ? "1" + jupiter.substring(1) : jupiter;

    assertVersion("org.junit.jupiter.api.Test", jupiter);
    assertVersion("org.junit.jupiter.engine.JupiterTestEngine", jupiter);
    assertVersion("org.junit.platform.launcher.Launcher", platform);
    assertVersion("org.junit.platform.engine.TestEngine", platform);
    assertVersion("org.junit.platform.commons.support.AnnotationSupport", platform);
  }

  private static void assertVersion(String className, String expected) throws ClassNotFoundException {
    Class<?> type = Class.forName(className, false, JUnitLineTest.class.getClassLoader());
    assertThat(type.getPackage().getImplementationVersion())
        .as(className + " from " + type.getProtectionDomain().getCodeSource().getLocation()).isEqualTo(expected);
  }
}
