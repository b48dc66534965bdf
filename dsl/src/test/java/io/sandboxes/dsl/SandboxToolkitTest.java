package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxInfo;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SandboxToolkitTest {
  @Test
  @DisplayName("text within the limit comes back whole; longer text keeps its head and tail around a marker with the full length")
  void bounded() {
    assertThat(ToolText.bounded("abc", 100)).isEqualTo("abc");
    String cut = ToolText.bounded("h".repeat(60) + "t".repeat(60), 100);
    assertThat(cut).startsWith("h".repeat(50)).endsWith("t".repeat(50)).contains("[... 20 characters cut; 120 in all ...]");
  }

  @Test
  @DisplayName("a builder refuses a tiny output limit and a non-positive timeout")
  void badSettings() {
    try (SandboxClient sandboxes = Sandboxes.at(java.net.URI.create("http://127.0.0.1:1"), java.net.URI.create("http://127.0.0.1:1"), "e2b_x")) {
      assertThatThrownBy(() -> SandboxToolkit.builder(sandboxes).outputLimit(99)).hasMessageContaining("at least 100");
      assertThatThrownBy(() -> SandboxToolkit.builder(sandboxes).commandTimeout(java.time.Duration.ZERO)).hasMessageContaining("positive");
    }
  }

  @Test
  @DisplayName("a conversation's sandbox is made on its first call, answers text, and is killed on release and at close")
  void conversations() {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).build();
      assertThat(toolkit.conversations()).isEmpty();
      assertThat(toolkit.runCommand("a", "echo $((6 * 7)) >&2; exit 4")).isEqualTo("exit code: 4\nstderr:\n42\n");
      assertThat(toolkit.pythonOutput(null, "print('default')")).isEqualTo("default");
      String a = toolkit.sandboxId("a");
      String other = toolkit.sandboxId(SandboxToolkit.DEFAULT_CONVERSATION);
      assertThat(a).isNotNull().isNotEqualTo(other);
      assertThat(toolkit.release("a")).isTrue();
      assertThat(toolkit.release("a")).isFalse();
      assertThat(sandboxes.list().stream().map(SandboxInfo::id)).doesNotContain(a).contains(other);
      toolkit.close();
      assertThat(sandboxes.list().stream().map(SandboxInfo::id)).doesNotContain(other);
      assertThat(toolkit.readFile("a", "/etc/hostname")).startsWith("error:").contains("closed");
    }
  }

  @Test
  @DisplayName("on the code interpreter's template, Python runs in the conversation's kernel: state carries, results and exceptions come back as text")
  void codeInterpreterKernel() {
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).template(io.sandboxes.SandboxSpec.CODE_INTERPRETER_TEMPLATE).build()) {
      assertThat(toolkit.runPython("k", "x = 21\nprint('set')")).isEqualTo("stdout:\nset\n");
      assertThat(toolkit.runPython("k", "x * 2")).isEqualTo("result: 42");
      assertThat(toolkit.runPython("k", "1 / 0")).startsWith("exception: ZeroDivisionError: division by zero\n").contains("Traceback");
      assertThat(toolkit.pythonOutput("k", "print('x is'); x")).isEqualTo("x is\n21");
      assertThat(toolkit.runPython("other", "x")).as("another conversation's kernel").contains("exception: NameError");
    }
  }
}
