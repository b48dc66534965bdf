package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The daemon across a server restart and across the death of its worker, in real containers. */
class DaemonLifecycleTest {
  private DaemonSandbox sandbox;

  @BeforeEach
  void up() throws Exception {
    sandbox = DaemonSandbox.start();
  }

  @AfterEach
  void down() throws Exception {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @DisplayName("the sandbox can reach the socket through its read-only mount but can neither replace it nor add to its folder")
  void readOnlyMount() throws Exception {
    DaemonProcess.Result r = sandbox.run("/bin/sh", "-c",
        "rm -f /run/sandboxes/envd.sock || echo rm refused; touch /run/sandboxes/x || echo touch refused; "
            + "(echo > /run/sandboxes-bin/envd) || echo overwrite refused; test -S /run/sandboxes/envd.sock && echo socket");
    assertThat(r.stdoutText()).isEqualTo("rm refused\ntouch refused\noverwrite refused\nsocket\n");
    assertThat(r.stderrText()).contains("Read-only file system");
    // the user (uid 1000) cannot even get into the folder, which belongs to the host's user with mode 0700
    assertThat(sandbox.sh("stat -c %a /run/sandboxes").strip()).isEqualTo("700");
  }

  @Test
  @DisplayName("after the server side closes and binds the socket again, the daemon reconnects: its processes are listed, stream, take stdin and signals")
  void serverRestart() throws Exception {
    DaemonConnection first = sandbox.conn();
    long sleepPid;
    long echoPid;
    try (DaemonProcess sleep = first.start(ProcessSpec.of("/bin/sleep", "300").withTag("sleeper"));
        DaemonProcess echo = first.start(ProcessSpec.of("/bin/sh", "-c", "while read l; do echo got $l; done").withStdin())) {
      sleepPid = sleep.pid();
      echoPid = echo.pid();
      sandbox.listener.close();
      assertThat(first.isOpen()).isFalse();
      assertThatThrownBy(echo::next).isInstanceOfSatisfying(DaemonException.class,
          e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.DISCONNECTED));
    }
    // a new server: same folder, socket unlinked and bound again
    sandbox.listener = DaemonListener.open(sandbox.socketFolder);
    DaemonConnection second = sandbox.conn();
    assertThat(second.hello().generation()).as("the same worker, reconnected").isEqualTo(first.hello().generation());
    assertThat(second.processes()).extracting(ProcessInfo::pid).contains(sleepPid, echoPid);
    try (DaemonProcess echo = second.attach(echoPid)) {
      echo.writeStdin("again\n".getBytes(StandardCharsets.UTF_8));
      ProcessEvent e = echo.next(Duration.ofSeconds(10));
      assertThat(e).isInstanceOfSatisfying(ProcessEvent.Output.class,
          o -> assertThat(new String(o.data(), StandardCharsets.UTF_8)).isEqualTo("got again\n"));
      echo.closeStdin();
      assertThat(echo.collect().status()).isEqualTo(new ExitStatus(true, 0, 0, false));
    }
    try (DaemonProcess sleep = second.attach(sleepPid)) {
      sleep.signal(15, true);
      assertThat(sleep.collect().status()).isEqualTo(new ExitStatus(false, 0, 15, false));
    }
  }

  @Test
  @DisplayName("a worker killed from inside the sandbox is restarted by the supervisor and serves again; what it ran is not pretended to be listed")
  void workerKilledFromInside() throws Exception {
    DaemonConnection old = sandbox.conn();
    long workerPid = old.hello().workerPid();
    DaemonProcess orphan = old.start(ProcessSpec.of("/bin/sleep", "301"));
    long orphanPid = orphan.pid();
    // the kill itself runs under the worker it kills: its own call cannot complete
    DaemonProcess killer = old.start(ProcessSpec.of("/bin/sh", "-c", "read go; kill -9 " + workerPid).withStdin());
    assertThatThrownBy(() -> {
      killer.writeStdin("go\n".getBytes(StandardCharsets.UTF_8));
      killer.collect();
    }).isInstanceOfSatisfying(DaemonException.class,
        e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.DISCONNECTED));
    assertThatThrownBy(orphan::collect).isInstanceOfSatisfying(DaemonException.class,
        e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.DISCONNECTED));
    DaemonConnection next = sandbox.listener.awaitConnectionOtherThan(old, DaemonSandbox.CONNECT);
    assertThat(next.hello().generation()).isEqualTo(old.hello().generation() + 1);
    assertThat(next.hello().workerPid()).isNotEqualTo(workerPid);
    assertThat(sandbox.run("/bin/echo", "again").stdoutText()).isEqualTo("again\n");
    // the dead worker's child runs on, outside any worker's table: not listed, not attachable
    assertThat(next.processes()).extracting(ProcessInfo::pid).doesNotContain(orphanPid);
    assertThat(sandbox.sh("ps -o stat= -p " + orphanPid).strip()).startsWith("S");
    assertThatThrownBy(() -> next.attach(orphanPid)).isInstanceOfSatisfying(DaemonException.class,
        e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
    await().atMost(Duration.ofSeconds(5)).until(() -> sandbox.sh("ps -o comm= -C envd-worker").strip().lines().count() == 1);
  }
}
