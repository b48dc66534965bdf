package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.EgressProbe;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A server started with the PATH cron, {@code su} without {@code -}, a systemd unit or an IDE
 * gives (no {@code /usr/sbin}, where iptables lives) still finds and runs every host tool: a child
 * JVM with {@code PATH=/usr/local/bin:/usr/bin:/bin} starts one, enforces an allow-list and reaches
 * the allowed witness through it.
 */
class MinimalPathTest {

  /** Run in the child JVM: prints what it saw, one fact a line. */
  public static void main(String[] args) throws Exception {
    try (LocalServer server = TestRuntime.builder().warmPool(0).build().start();
         E2BSandboxProvider c = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
             .apiKey(server.apiKey()).build()) {
      System.out.println("enforced=" + server.egressEnforced());
      EgressProbe p = server.egressProbe();
      try (LiveSandbox s = c.api().create()) {
        c.api().updateNetwork(s.id(), List.of(p.allowedHost()), List.of());
        System.out.println("allowed=" + s.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + p.allowedHost() + "/")
            .stdout().strip());
      }
    }
  }

  @Test
  @DisplayName("with PATH=/usr/local/bin:/usr/bin:/bin the server enforces an allow-list and the allowed witness answers")
  void minimalPath() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), MinimalPathTest.class.getName())
        .redirectErrorStream(true);
    pb.environment().put("PATH", "/usr/local/bin:/usr/bin:/bin");
    TestRuntime.named().ifPresent(r -> pb.command().add(1, "-D" + LocalRuntimeService.RUNTIME_PROPERTY + "=" + r));
    Process child = pb.start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(5, TimeUnit.MINUTES)).isTrue();
    assertThat(out).as(out).contains("enforced=true").contains("allowed=200");
    assertThat(child.exitValue()).as(out).isZero();
  }
}
