package io.sandboxes.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SandboxCodeExecutionEngineTest {
  @Test
  @DisplayName("the engine answers what Python printed, keeps its files between calls, and reports a failure as text")
  void executesPython() {
    try (SandboxClient sandboxes = Sandboxes.local(); SandboxCodeExecutionEngine engine = new SandboxCodeExecutionEngine(sandboxes)) {
      assertThat(engine.execute("print(sum(range(101)))")).isEqualTo("5050");
      assertThat(engine.execute("open('/tmp/kept', 'w').write('still here')")).isEmpty();
      assertThat(engine.execute("print(open('/tmp/kept').read())")).isEqualTo("still here");
      assertThat(engine.execute("1 / 0")).startsWith("exit code: 1").contains("ZeroDivisionError");
    }
  }
}
