package io.sandboxes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SpecsTest {

  @Test
  @DisplayName("SandboxSpec validates at the setter and copies its maps")
  void sandboxSpec() {
    Map<String, String> env = new HashMap<>(Map.of("A", "1"));
    SandboxSpec spec = SandboxSpec.defaults().withEnv(env);
    env.put("B", "2");
    assertThat(spec.env()).containsOnlyKeys("A");
    assertThat(spec.template()).isEqualTo("base");
    assertThat(spec.timeout()).isEqualTo(Duration.ofMinutes(5));
    assertThatThrownBy(() -> spec.withTimeout(Duration.ZERO)).hasMessageContaining("timeout");
    assertThatThrownBy(() -> spec.withTemplate("bad template")).hasMessageContaining("template");
    assertThatThrownBy(() -> spec.withMetadata(null)).hasMessageContaining("metadata");
  }

  @Test
  @DisplayName("ExecOptions validates its deadline and names; ExecResult.orThrow passes success through")
  void execOptions() {
    assertThat(ExecOptions.defaults().timeout()).isEqualTo(Duration.ofSeconds(60));
    assertThatThrownBy(() -> ExecOptions.defaults().withTimeout(Duration.ofSeconds(-1))).hasMessageContaining("timeout");
    assertThatThrownBy(() -> ExecOptions.defaults().withCwd(" ")).hasMessageContaining("cwd");
    ExecResult ok = new ExecResult(0, "x", "", Duration.ZERO);
    assertThat(ok.orThrow()).isSameAs(ok);
    ExecResult bad = new ExecResult(2, "", "oops", Duration.ZERO);
    assertThatThrownBy(bad::orThrow).isInstanceOfSatisfying(CommandFailedException.class, e -> assertThat(e.result()).isSameAs(bad));
  }
}
