package io.sandboxes.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxSpec;
import io.sandboxes.VolumeMount;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Runs the Javadoc examples of {@link CoreSnippets} that need no sandbox, and checks what they build. */
class CoreSnippetsTest {

  @Test
  @DisplayName("SandboxConfig's Javadoc example builds the config it describes")
  void sandboxConfig() {
    SandboxConfig config = CoreSnippets.sandboxConfig();
    assertThat(config.projectId()).isEqualTo("p1");
    assertThat(config.env()).isEqualTo(Map.of("A", "1"));
    assertThat(config.labels()).isEqualTo(Map.of("team", "x"));
    assertThat(config.volumeName()).isEqualTo("mol-project-p1");
    assertThat(config.volumeMountPath()).isEqualTo("/workspace/my-app");
    assertThat(config.templateId()).isNull();
  }

  @Test
  @DisplayName("SandboxSpec's Javadoc example builds the spec it describes")
  void sandboxSpec() {
    SandboxSpec spec = CoreSnippets.sandboxSpec();
    assertThat(spec.template()).isEqualTo("base");
    assertThat(spec.timeout()).isEqualTo(Duration.ofMinutes(10));
    assertThat(spec.metadata()).isEqualTo(Map.of("team", "infra"));
    assertThat(spec.onTimeout()).isEqualTo(OnTimeout.KILL);
    assertThat(spec.volumes()).isEqualTo(List.<VolumeMount>of());
  }
}
