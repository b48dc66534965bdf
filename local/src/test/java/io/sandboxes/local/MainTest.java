package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SharedServer.class)
class MainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return Main.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("status lists a live sandbox with the server that made it")
  void status(E2BApi e2b, SharedServer.Running shared) {
    try (LiveSandbox s = e2b.create()) {
      assertThat(run("status")).isZero();
      // the row of this sandbox names the shared server (whose id no longer starts "inproc-";
      // that passed only while another class's in-process server had a sandbox)
      assertThat(out.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith(s.id())))
          .singleElement().satisfies(row -> assertThat(row).contains(shared.serverId()).contains("running"));
    }
  }

  @Test
  @DisplayName("image list shows the current base image")
  void imageList() {
    assertThat(run("image", "list")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("sandboxes-local/base:").contains("(current)");
  }

  @Test
  @DisplayName("forward asks a running server for a sandbox's port and prints the URL; errors exit non-zero with the server's reason")
  void forward(E2BApi e2b, LocalServer server) {
    try (LiveSandbox s = e2b.create()) {
      assertThat(run("forward", s.id(), "8000", "--api-url", server.apiUrl().toString(), "--api-key", server.apiKey())).isZero();
      assertThat(out.toString(StandardCharsets.UTF_8).strip()).isEqualTo(server.forward(s.id(), 8000).toString());
      assertThat(run("forward", "nosuchsandbox", "8000", "--api-url", server.apiUrl().toString(), "--api-key", server.apiKey()))
          .isEqualTo(1);
      assertThat(err.toString(StandardCharsets.UTF_8)).contains("404").contains("nosuchsandbox");
      err.reset();
      assertThat(run("forward", s.id(), "--api-key", "k")).isEqualTo(2);
      assertThat(err.toString(StandardCharsets.UTF_8)).contains("usage: sandboxes-local forward");
    }
  }

  @Test
  @DisplayName("bad usage exits 2 with a message naming what was wrong")
  void badUsage() {
    assertThat(run("frobnicate")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown command 'frobnicate'");
    err.reset();
    assertThat(run("serve", "--port", "abc")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--port must be a number");
    err.reset();
    assertThat(run("serve", "--port", "70000")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("apiPort");
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("sandboxes-local serve");
  }

  @Test
  @DisplayName("serve --internet-by-default makes a server that applies E2B's default egress; without it, deny")
  void internetByDefaultFlag() {
    PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(Main.serveOptions(new java.util.ArrayDeque<>(List.of("--internet-by-default")), sink).build().internetByDefault()).isTrue();
    assertThat(Main.serveOptions(new java.util.ArrayDeque<>(List.of("--port", "0")), sink).build().internetByDefault()).isFalse();
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("--internet-by-default");
  }

  @Test
  @DisplayName("serve --warm-pool-max N caps how far the warm pools grow; without it, none is set (the server takes its default from the engine's memory); out of range, refused")
  void warmPoolMaxFlag() {
    PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(Main.serveOptions(new java.util.ArrayDeque<>(List.of("--warm-pool-max", "5")), sink).warmPoolMax).isEqualTo(5);
    assertThat(Main.serveOptions(new java.util.ArrayDeque<>(List.of("--port", "0")), sink).warmPoolMax).isNull();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LocalServer.builder().warmPoolMax(65))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("--warm-pool-max");
  }

  @Test
  @DisplayName("serve --runtime names the Docker runtime: one Docker does not know fails the start (exit 1) saying so, a malformed name is bad usage")
  void runtimeFlag() {
    assertThat(run("serve", "--port", "0", "--envd-port", "0", "--runtime", "sandboxes-no-such-runtime")).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("Docker does not know the runtime 'sandboxes-no-such-runtime'");
    err.reset();
    assertThat(run("serve", "--runtime", "run sc")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("a runtime is named by");
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("--runtime runsc");
  }
}
