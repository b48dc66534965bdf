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

  @Test
  @DisplayName("a conversation's sandbox timeout counts from its last call: a call with less than half left sets it anew")
  void timeoutFromTheLastCall() {
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).sandboxTimeout(java.time.Duration.ofSeconds(8)).build()) {
      assertThat(toolkit.runCommand("t", "true")).isEqualTo("exit code: 0");
      String id = toolkit.sandboxId("t");
      java.time.Instant first = endAt(sandboxes, id);
      // until less than half of the 8 s is left (the server's clock says so, not a sleep)
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(8)).pollInterval(java.time.Duration.ofMillis(200))
          .until(() -> java.time.Duration.between(java.time.Instant.now(), first).toMillis() < 3_500);
      assertThat(toolkit.runCommand("t", "true")).isEqualTo("exit code: 0");
      assertThat(endAt(sandboxes, id)).isAfter(first.plusSeconds(2));
      assertThat(toolkit.sandboxId("t")).isEqualTo(id);
    }
  }

  private static java.time.Instant endAt(SandboxClient sandboxes, String id) {
    return sandboxes.list().stream().filter(i -> i.id().equals(id)).findFirst().orElseThrow().endAt();
  }

  @Test
  @DisplayName("a conversation whose sandbox was killed is told once that its files are gone, and its next call gets a new sandbox")
  void endedSandboxIsReplaced() {
    try (SandboxClient sandboxes = Sandboxes.local(); SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).build()) {
      assertThat(toolkit.writeFile("k", "/home/user/notes.txt", "kept")).startsWith("wrote");
      String id = toolkit.sandboxId("k");
      sandboxes.connect(id).close(); // killed from outside, as its timeout would
      assertThat(toolkit.readFile("k", "/home/user/notes.txt")).startsWith("error: this conversation's sandbox " + id + " has ended")
          .contains("files are gone");
      assertThat(toolkit.sandboxId("k")).isNull();
      assertThat(toolkit.readFile("k", "/home/user/notes.txt")).startsWith("error:").doesNotContain("has ended");
      assertThat(toolkit.sandboxId("k")).isNotNull().isNotEqualTo(id);
      assertThat(toolkit.runCommand("k", "echo fresh")).isEqualTo("exit code: 0\nstdout:\nfresh\n");
    }
  }
}
