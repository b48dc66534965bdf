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

  @Test
  @DisplayName("tool text is plain: colour codes go, a progress bar redrawn with carriage returns keeps what it showed last")
  void plainText() {
    assertThat(ToolText.plain("\u001B[0;31mKeyError\u001B[0m: 'b' \u001B]8;;http://x\u0007link\u001B]8;;\u0007")).isEqualTo("KeyError: 'b' link");
    assertThat(ToolText.plain(" 10%|#    |\r 50%|###  |\r100%|#####|\r\ndone\r\n")).isEqualTo("100%|#####|\ndone\n");
    assertThat(ToolText.result(new io.sandboxes.ExecResult(1, "\u001B[1;32mok\u001B[0m\n", "\u001B[31mfail\u001B[0m\n",
        java.time.Duration.ZERO), 100)).isEqualTo("exit code: 1\nstdout:\nok\n\nstderr:\nfail\n");
  }

  @Test
  @DisplayName("an IPython traceback (a KeyError inside pandas: 43 coloured lines) comes back plain and short: each frame's place and marked line, and the exception")
  void shortTraceback() throws Exception {
    String raw;
    try (var in = SandboxToolkitTest.class.getResourceAsStream("ipython-keyerror-traceback.txt")) {
      raw = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    assertThat(raw.lines().count()).isEqualTo(43);
    String tb = ToolText.traceback(raw);
    assertThat(tb).doesNotContain("\u001B").doesNotContain("-----");
    assertThat(tb.lines().count()).isLessThanOrEqualTo(20);
    assertThat(tb.lines().toList()).startsWith("Traceback (most recent call last):")
        .contains("Cell In [2], line 3", "  line 3: df['b']", "The above exception was the direct cause of the following exception:",
            "  line 3804: raise KeyError(key) from err")
        .doesNotContain("  line 3801: try:") // a line of context around a frame, not the frame's own
        .endsWith("KeyError: 'b'");
    // a traceback of Python's own shape loses nothing
    String python = "Traceback (most recent call last):\n  File \"/tmp/x.py\", line 1, in <module>\n    1 / 0\n"
        + "ZeroDivisionError: division by zero";
    assertThat(ToolText.traceback(python)).isEqualTo(python);
  }

  @Test
  @DisplayName("a command or code run past its time is an error that keeps what it printed before it was stopped, colour codes removed")
  void timeoutKeepsOutput() {
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).commandTimeout(java.time.Duration.ofSeconds(2)).build();
         SandboxToolkit kernel = SandboxToolkit.builder(sandboxes).template(io.sandboxes.SandboxSpec.CODE_INTERPRETER_TEMPLATE)
             .commandTimeout(java.time.Duration.ofSeconds(2)).build()) {
      assertThat(toolkit.runCommand("t", "printf '\\033[32mbuilding\\033[0m\\n'; echo half >&2; sleep 30"))
          .startsWith("error: command timed out")
          .contains("\nstdout before it was stopped:\nbuilding\n", "\nstderr before it was stopped:\nhalf\n")
          .doesNotContain("\u001B");
      assertThat(kernel.runPython("t", "import time\nprint('loaded', flush=True)\ntime.sleep(30)"))
          .startsWith("error: ").contains("\nstdout before it was stopped:\nloaded\n");
      String keyError = kernel.runPython("t", "d = {'a': 1}\nd['b']");
      assertThat(keyError).startsWith("exception: KeyError: 'b'\n").doesNotContain("\u001B").contains("  line 2: d['b']");
      assertThat(keyError.lines().count()).isLessThanOrEqualTo(6);
    }
  }

  @Test
  @DisplayName("the network policy for the tools' descriptions: closed on the local runtime, or the allowed hosts, and denials are not to be retried")
  void networkPolicy() {
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit closed = SandboxToolkit.builder(sandboxes).build();
         SandboxToolkit open = SandboxToolkit.builder(sandboxes).allowOut("pypi.org", "*.pythonhosted.org").build()) {
      assertThat(closed.networkPolicy()).contains("no network access (closed by default)").contains("do not retry");
      assertThat(open.networkPolicy()).contains("can reach only pypi.org, *.pythonhosted.org").contains("HTTP 403")
          .contains("do not retry");
    }
    try (SandboxClient cloud = Sandboxes.at(java.net.URI.create("https://api.e2b.app"), java.net.URI.create("https://sandbox.e2b.app"),
        "e2b_x"); SandboxToolkit toolkit = SandboxToolkit.builder(cloud).build()) {
      assertThat(toolkit.networkPolicy()).doesNotContain("closed").contains("internet");
    }
  }
}
