package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class BaseImageTest {
  @Test
  @DisplayName("a build's first line says it builds the base image, once, and about how long that takes")
  void firstLine() {
    assertThat(BaseImage.firstProgressLine("http://deb.example"))
        .isEqualTo("building the base image " + BaseImage.reference() + " once; this takes about a minute (Debian bookworm packages from "
            + "http://deb.example), and later starts reuse it");
  }
}
