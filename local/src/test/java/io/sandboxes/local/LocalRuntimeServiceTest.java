package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What {@code Sandboxes.local()} starts, as the system properties choose it. */
class LocalRuntimeServiceTest {

  @Test
  @DisplayName("sandboxes.local.runtime reaches the server Sandboxes.local() starts: one the real Docker does not know fails its start, saying so")
  void runtimeProperty() {
    assertThatThrownBy(() -> new LocalRuntimeService().start(
        name -> name.equals(LocalRuntimeService.RUNTIME_PROPERTY) ? "sandboxes-no-such-runtime" : null))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("Docker does not know the runtime 'sandboxes-no-such-runtime'");
  }
}
