package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.ExecResult;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.SandboxInfo;
import io.sandboxes.e2b.SandboxQuery;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SandboxRequestTest {
  private SandboxClient sandboxes;

  @BeforeAll
  void startClient() {
    java.util.function.Function<String, String> noEnvironment = name -> null;
    sandboxes = Sandboxes.autoWith(noEnvironment);
  }

  @AfterAll
  void stop() {
    sandboxes.close();
  }

  @Test
  @DisplayName("a request is immutable: every setter returns a new one and nothing is created until a terminal verb")
  void immutable() {
    int before = sandboxes.provider().api().listAll(SandboxQuery.all()).size();
    SandboxRequest base = sandboxes.sandbox();
    SandboxRequest tuned = base.timeout(Duration.ofMinutes(9)).env("A", "1").metadata("team", "x").onTimeout(OnTimeout.PAUSE);
    assertThat(base.spec().timeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(base.spec().env()).isEmpty();
    assertThat(tuned.spec().timeout()).isEqualTo(Duration.ofMinutes(9));
    assertThat(tuned.spec().env()).containsEntry("A", "1");
    assertThat(tuned.spec().metadata()).containsEntry("team", "x");
    assertThat(tuned.spec().onTimeout()).isEqualTo(OnTimeout.PAUSE);
    assertThat(sandboxes.provider().api().listAll(SandboxQuery.all())).hasSize(before);
  }

  @Test
  @DisplayName("bad configuration fails at the setter, naming the parameter")
  void validation() {
    SandboxRequest r = sandboxes.sandbox();
    assertThatThrownBy(() -> r.timeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
    assertThatThrownBy(() -> r.env(" ", "x")).hasMessageContaining("env name");
    assertThatThrownBy(() -> r.env("A", null)).hasMessageContaining("env value");
    assertThatThrownBy(() -> r.metadata("", "x")).hasMessageContaining("metadata key");
    assertThatThrownBy(() -> r.allowOut("not a host!")).hasMessageContaining("allowOut");
    assertThatThrownBy(() -> r.withVolume("vol", "relative/path")).hasMessageContaining("path");
    assertThatThrownBy(() -> r.template("bad template")).hasMessageContaining("template");
  }

  @Test
  @DisplayName("start gives a live sandbox with the request's env, metadata and template; closing destroys it")
  void start() {
    LiveSandbox s = sandboxes.sandbox().env("GREETING", "hi").metadata("suite", "dsl").create();
    try (s) {
      assertThat(s.exec("echo $GREETING").stdout()).isEqualTo("hi\n");
      SandboxInfo info = sandboxes.provider().api().info(s.id());
      assertThat(info.metadata()).containsEntry("suite", "dsl");
      assertThat(info.templateId()).isEqualTo("base");
    }
    assertThatThrownBy(() -> sandboxes.provider().api().info(s.id())).isInstanceOf(SandboxNotFoundException.class);
  }

  @Test
  @DisplayName("exec runs once in a fresh sandbox and destroys it; run and apply close for you, even on failure")
  void terminalVerbs() {
    int before = sandboxes.provider().api().listAll(SandboxQuery.all()).size();
    ExecResult r = sandboxes.sandbox().exec("python3 -c 'print(6 * 7)'");
    assertThat(r.stdout()).isEqualTo("42\n");
    String applied = sandboxes.sandbox().apply(s -> s.exec("echo applied").stdout());
    assertThat(applied).isEqualTo("applied\n");
    AtomicReference<String> id = new AtomicReference<>();
    assertThatThrownBy(() -> sandboxes.sandbox().run(s -> {
      id.set(s.id());
      throw new IllegalStateException("work failed");
    })).hasMessage("work failed");
    assertThatThrownBy(() -> sandboxes.provider().api().info(id.get())).isInstanceOf(SandboxNotFoundException.class);
    assertThat(sandboxes.provider().api().listAll(SandboxQuery.all())).hasSize(before);
  }

  @Test
  @DisplayName("a live sandbox snapshots itself; the snapshot is a template a new request boots from")
  void snapshot() {
    String name = "dsl-snap-" + System.nanoTime() % 1_000_000;
    String template = sandboxes.sandbox().apply(s -> {
      s.writeFile("/home/user/state.txt", "kept");
      return s.snapshot(name).snapshotId();
    });
    try {
      String restored = sandboxes.sandbox().template(template).apply(s -> s.readFile("/home/user/state.txt"));
      assertThat(restored).isEqualTo("kept");
    } finally {
      sandboxes.provider().api().deleteTemplate(template);
    }
  }

  @Test
  @DisplayName("allowOut is sent deny-by-default in the create request: the allowed witness answers, the denied one does not")
  void allowOut() {
    String allowed = io.sandboxes.local.internal.egress.SandboxNetwork.ALLOWED_WITNESS;
    String denied = io.sandboxes.local.internal.egress.SandboxNetwork.DENIED_WITNESS;
    sandboxes.sandbox().allowOut(allowed).run(s -> {
      assertThat(s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + allowed + "/").stdout()).isEqualTo("200");
      assertThat(s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + denied + "/").stdout())
          .as("the gateway refuses it, saying so").isEqualTo("403");
    });
    assertThat(sandboxes.verifyEgress().state()).isEqualTo(io.sandboxes.EgressVerdict.State.FILTERED);
  }

  @Test
  @DisplayName("the DSL's classes carry @CheckReturnValue in their class files, where Error Prone and SpotBugs look")
  void checkReturnValue() throws Exception {
    for (Class<?> c : List.of(SandboxRequest.class, SandboxClient.class)) {
      try (java.io.InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
        String bytes = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThat(bytes).as(c.getName()).contains("Lcom/google/errorprone/annotations/CheckReturnValue;");
      }
    }
  }
}
