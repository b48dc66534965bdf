package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecOptions;
import io.sandboxes.ProcessExit;
import io.sandboxes.SandboxException;
import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What gVisor changes at the sandbox's boundary, attacked from inside a sandbox of a server on
 * {@code runsc}: root there meets gVisor's kernel, not the host's, and cannot open a raw socket
 * (the family does not exist there, whatever its capabilities); and what the daemon had to learn
 * for it (file operations keep the user's permissions without setfsuid, a PTY's end is seen
 * without a hang-up). Skipped, saying why, only where Docker does not know runsc and the run did
 * not ask for it; the CI registers it ({@code scripts/docker-up.sh --runsc}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GvisorBoundaryTest {
  /** Linux's EAFNOSUPPORT: gVisor's answer to a raw socket, where runc's kernel answers EPERM without CAP_NET_RAW. */
  private static final int EAFNOSUPPORT = 97;

  private LocalServer server;
  private E2BSandboxProvider provider;
  private E2BApi e2b;

  @BeforeAll
  void start() {
    try {
      server = LocalServer.builder().runtime("runsc").warmPool(0).build().start();
    } catch (SandboxException e) {
      if (!TestRuntime.gvisor() && String.valueOf(e.getMessage()).contains("does not know the runtime")) {
        Assumptions.abort("Docker here does not know gVisor's runsc (scripts/docker-up.sh --runsc registers it): " + e.getMessage());
      }
      throw e;
    }
    provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
    e2b = provider.api();
  }

  @AfterAll
  void stop() {
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  @DisplayName("root in a runsc sandbox meets gVisor's kernel: a release other than the host's, and gVisor's boot log")
  void kernelIsGvisors() {
    assertThat(server.gvisor()).isTrue();
    assertThat(server.runtime()).isEqualTo("runsc");
    try (LiveSandbox s = e2b.create()) {
      ExecOptions root = ExecOptions.defaults().withUser("root");
      String release = s.exec("uname -r", root).stdout().strip();
      // under runc the sandbox shares the host's kernel, and uname says so
      assertThat(release).isNotBlank().isNotEqualTo(System.getProperty("os.version"));
      assertThat(s.exec("dmesg", root).stdout()).contains("gVisor");
    }
  }

  @Test
  @DisplayName("root in a runsc sandbox on the egress network cannot open a raw socket of any family: gVisor has none (EAFNOSUPPORT), while egress through the gateway works")
  void rawSocketsRefusedToRoot() throws Exception {
    io.sandboxes.EgressProbe p = server.egressProbe();
    try (LiveSandbox s = e2b.create()) {
      if (server.egressEnforced()) {
        // on the sandbox network, where a hand-built packet would have somewhere to go
        policy(s.id(), "{\"allowOut\":[\"" + p.allowedHost() + "\"]}");
        assertThat(s.exec("curl -s -m 10 http://" + p.allowedHost() + "/").stdout()).isEqualTo("witness allowed\n");
      }
      String script = String.join("\n",
          "import socket",
          "cases = [('packet-raw', socket.AF_PACKET, socket.SOCK_RAW, 0x0300),",
          "         ('packet-dgram', socket.AF_PACKET, socket.SOCK_DGRAM, 0x0300),",
          "         ('inet-raw-icmp', socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),",
          "         ('inet-raw', socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW),",
          "         ('inet6-raw', socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)]",
          "for name, family, kind, proto in cases:",
          "    try:",
          "        socket.socket(family, kind, proto).close()",
          "        print(name, 'OPEN')",
          "    except OSError as e:",
          "        print(name, 'refused', e.errno)");
      s.writeFile("/tmp/raw.py", script);
      String out = s.exec("id -u; python3 /tmp/raw.py", ExecOptions.defaults().withUser("root")).stdout();
      assertThat(out).isEqualTo("0\npacket-raw refused " + EAFNOSUPPORT + "\npacket-dgram refused " + EAFNOSUPPORT
          + "\ninet-raw-icmp refused " + EAFNOSUPPORT + "\ninet-raw refused " + EAFNOSUPPORT + "\ninet6-raw refused " + EAFNOSUPPORT + "\n");
    }
  }

  @Test
  @DisplayName("under gVisor (which has no setfsuid) a read asked for the user keeps the user's permissions, and a write goes where E2B's does and leaves the user's files and folders")
  void fileOperationsKeepTheUsersPermissions() {
    try (LiveSandbox s = e2b.create()) {
      s.exec("echo root-only > /root/secret.txt && chmod 600 /root/secret.txt", ExecOptions.defaults().withUser("root"));
      assertThatThrownBy(() -> s.readFile("/root/secret.txt")).isInstanceOf(SandboxException.class)
          .hasMessageContaining("ermission denied");
      // as E2B's envd: written as root, then given to the user, with the folders it made
      s.writeFile("/root/planted/notes.txt", "by the user");
      s.writeFile("/tmp/mine/notes.txt", "the user's");
      // find stats with fstatat: coreutils' stat uses statx with AT_NO_AUTOMOUNT, which this gVisor refuses
      assertThat(s.exec("find /root/planted /root/planted/notes.txt /tmp/mine /tmp/mine/notes.txt -maxdepth 0 -printf '%u %p\\n'",
              ExecOptions.defaults().withUser("root")).stdout())
          .isEqualTo("user /root/planted\nuser /root/planted/notes.txt\nuser /tmp/mine\nuser /tmp/mine/notes.txt\n");
      // /tmp is sticky: only the file's owner may remove it
      assertThat(s.exec("rm /tmp/mine/notes.txt && rmdir /tmp/mine && echo removed").stdout()).isEqualTo("removed\n");
    }
  }

  @Test
  @DisplayName("a PTY process's end is reported under gVisor, whose PTY master never hangs up: its output, then its exit code, promptly")
  void ptyEndIsReported() {
    try (LiveSandbox s = e2b.create()) {
      StringBuffer screen = new StringBuffer();
      List<ProcessExit> closes = new CopyOnWriteArrayList<>();
      try (SpawnHandle p = s.spawn("printf 'pty-%s\\n' done; exit 3", SpawnOptions.terminal(80, 24))) {
        p.onStdout(screen::append);
        p.onClose(closes::add);
        // a hang waits forever; a loaded machine reports within a second or two
        await().atMost(Duration.ofSeconds(10)).until(() -> closes.size() == 1);
      }
      assertThat(screen.toString()).contains("pty-done");
      assertThat(closes.get(0).exitCode()).isEqualTo(3);
    }
  }

  private void policy(String sandboxId, String json) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.apiUrl() + "/sandboxes/" + sandboxId + "/network"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .PUT(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
  }
}
