package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Processes through the daemon in a real container of the base image. */
class DaemonProcessTest {
  private static DaemonSandbox sandbox;

  @BeforeAll
  static void up() throws Exception {
    sandbox = DaemonSandbox.start();
  }

  @AfterAll
  static void down() throws Exception {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @DisplayName("echo comes back on stdout, stderr apart, and exit codes are exit codes")
  void echoAndExitCodes() throws Exception {
    DaemonProcess.Result r = sandbox.run("/bin/bash", "-l", "-c", "echo hi; echo oops >&2; exit 3");
    assertThat(r.stdoutText()).isEqualTo("hi\n");
    assertThat(r.stderrText()).isEqualTo("oops\n");
    assertThat(r.status()).isEqualTo(new ExitStatus(true, 3, 0, false));
    assertThat(r.status().describe()).isEqualTo("exit status 3");
    assertThat(sandbox.run("/bin/true").status()).isEqualTo(new ExitStatus(true, 0, 0, false));
  }

  @Test
  @DisplayName("collecting a process that prints without end stops at the bound, kills the process and says so")
  void collectIsBounded() throws Exception {
    DaemonConnection c = sandbox.conn();
    try (DaemonProcess p = c.start(ProcessSpec.of("/bin/sh", "-c", "yes sandbox"))) {
      DaemonException tooLarge = assertTimeoutPreemptively(Duration.ofSeconds(30),
          () -> (DaemonException) catchThrowable(() -> p.collect(1 << 20)));
      assertThat(tooLarge).isNotNull();
      assertThat(tooLarge.kind()).isEqualTo(DaemonException.Kind.TOO_LARGE);
      assertThat(tooLarge).hasMessageContaining("more than 1048576 bytes on stdout");
      await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.sh("pgrep -x yes | wc -l").strip().equals("0"));
    }
  }

  @Test
  @DisplayName("a death by SIGKILL is reported as the signal, distinct from a process that exits with 137")
  void signalIsNotExit137() throws Exception {
    DaemonProcess.Result killed = sandbox.run("/bin/sh", "-c", "kill -9 $$");
    assertThat(killed.status()).isEqualTo(new ExitStatus(false, 0, 9, false));
    assertThat(killed.status().describe()).isEqualTo("signal: killed");
    DaemonProcess.Result exited = sandbox.run("/bin/sh", "-c", "exit 137");
    assertThat(exited.status()).isEqualTo(new ExitStatus(true, 137, 0, false));
    assertThat(exited.status()).isNotEqualTo(killed.status());
  }

  @Test
  @DisplayName("a signal to the process group reaches the sleep a shell started; one to the shell alone does not")
  void groupKillReachesChildren() throws Exception {
    DaemonConnection c = sandbox.conn();
    try (DaemonProcess p = c.start(ProcessSpec.of("/bin/bash", "-c", "sleep 300 & sleep 301 & echo started; wait"))) {
      assertThat(text(p.next(Duration.ofSeconds(10)))).isEqualTo("started\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.sh("pgrep -g " + p.pid() + " -x sleep | wc -l").strip().equals("2"));
      p.signal(9, true);
      DaemonProcess.Result r = p.collect();
      assertThat(r.status().signal()).isEqualTo(9);
      // the killed sleeps are orphans that Docker's init reaps: wait for it rather than race it
      // (counted by their arguments: other tests of this class share the sandbox and run sleeps too)
      await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.sh("pgrep -fx 'sleep 30[01]' | wc -l").strip().equals("0"));
    }
    // the same shell killed alone leaves its sleep behind, holding the output open
    try (DaemonProcess p = c.start(ProcessSpec.of("/bin/bash", "-c", "sleep 302 & echo started; wait"))) {
      assertThat(text(p.next(Duration.ofSeconds(10)))).isEqualTo("started\n");
      p.signal(9, false);
      assertThat(p.next(Duration.ofMillis(500))).as("no exit while the sleep holds stdout").isNull();
      assertThat(sandbox.sh("pgrep -fx 'sleep 302' | wc -l").strip()).isEqualTo("1");
      assertThat(p.exit()).isNotDone();
      p.signal(15, true);
      assertThat(p.collect().status()).isEqualTo(new ExitStatus(false, 0, 9, false));
    }
  }

  @Test
  @DisplayName("stdin reaches cat, and closing it gives cat its EOF")
  void stdinToCat() throws Exception {
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("/bin/cat").withStdin())) {
      p.writeStdin("piped\n".getBytes(StandardCharsets.UTF_8));
      assertThat(text(p.next(Duration.ofSeconds(10)))).isEqualTo("piped\n");
      p.writeStdin("more".getBytes(StandardCharsets.UTF_8));
      p.closeStdin();
      DaemonProcess.Result r = p.collect();
      assertThat(r.stdoutText()).isEqualTo("more");
      assertThat(r.status().exitCode()).isZero();
    }
    // without stdin the process reads /dev/null: EOF at once
    assertThat(sandbox.run("/bin/cat").status().exitCode()).isZero();
  }

  @Test
  @DisplayName("a PTY has the size asked for, and a resize changes it")
  void ptySize() throws Exception {
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("/bin/sh", "-c", "stty size; read x; stty size").withPty(100, 30))) {
      StringBuilder out = new StringBuilder();
      await().atMost(Duration.ofSeconds(10)).until(() -> {
        ProcessEvent e = p.next(Duration.ofMillis(100));
        if (e instanceof ProcessEvent.Output o) {
          assertThat(o.fd()).isEqualTo(3);
          out.append(new String(o.data(), StandardCharsets.UTF_8));
        }
        return out.toString().contains("30 100");
      });
      p.resize(120, 40);
      p.writeStdin("\n".getBytes(StandardCharsets.UTF_8));
      DaemonProcess.Result r = p.collect();
      assertThat(out + r.stdoutText()).contains("40 120");
      assertThat(r.status().exitCode()).isZero();
    }
  }

  @Test
  @DisplayName("a user is resolved from the sandbox's /etc/passwd: uid, gid, groups, HOME and the home as cwd")
  void users() throws Exception {
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("/bin/sh", "-c", "id -u; id -g; echo $HOME $USER; pwd")
        .asUser("user").withEnv(Map.of("EXTRA", "1")))) {
      assertThat(p.collect().stdoutText()).isEqualTo("1000\n1000\n/home/user user\n/home/user\n");
    }
    assertThatThrownBy(() -> sandbox.conn().start(ProcessSpec.of("/bin/true").asUser("nobody-here")))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.UNKNOWN_USER));
    assertThatThrownBy(() -> sandbox.conn().start(ProcessSpec.of("/bin/true").withCwd("/no/such/dir")))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.INVALID));
    assertThatThrownBy(() -> sandbox.conn().start(ProcessSpec.of("/no/such/program")))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  @Test
  @DisplayName("a bare name is looked for in the PATH the process is given (not the daemon's), a script without #! runs under /bin/sh, a file that may not run is PERMISSION")
  void commandSearch() throws Exception {
    // scripts without #!: the kernel cannot run them (ENOEXEC), so they run under /bin/sh
    sandbox.run("/bin/sh", "-c", "mkdir -p /opt/own /opt/late && printf '%s\\n' 'echo own tool \"$@\"' > /opt/own/tool"
        + " && chmod 755 /opt/own/tool && cp /opt/own/tool /opt/own/other && printf '%s\\n' 'echo late one' > /opt/late/other"
        + " && chmod 644 /opt/late/other");
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("tool", "a", "b").withEnv(Map.of("PATH", "/nowhere::/opt/own:/bin")))) {
      DaemonProcess.Result r = p.collect();
      assertThat(r.stdoutText()).isEqualTo("own tool a b\n");
      assertThat(r.status().exitCode()).isZero();
    }
    // an entry that cannot be run is passed over for a later one that can, as execvp does
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("other").withEnv(Map.of("PATH", "/opt/late:/opt/own")))) {
      assertThat(p.collect().stdoutText()).isEqualTo("own tool\n");
    }
    try (DaemonProcess p = sandbox.conn().start(ProcessSpec.of("/opt/own/tool", "x"))) {
      assertThat(p.collect().stdoutText()).isEqualTo("own tool x\n");
    }
    // not on the daemon's own PATH, nor on the default one
    assertThatThrownBy(() -> sandbox.conn().start(ProcessSpec.of("tool")))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
    assertThatThrownBy(() -> sandbox.conn().start(ProcessSpec.of("other").withEnv(Map.of("PATH", "/opt/late"))))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.PERMISSION));
    // many starts later (each child borrows the daemon's memory until its exec) the daemon still answers, and a bare
    // name still resolves through the default PATH
    for (int i = 0; i < 200; i++) {
      assertThat(sandbox.run("true").status().exitCode()).isZero();
    }
    assertThat(sandbox.run("/bin/sh", "-c", "echo $PATH").stdoutText()).isEqualTo("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
  }

  @Test
  @DisplayName("the exit waits for a background child that still holds stdout, and its late output arrives")
  void outputOfBackgroundChild() throws Exception {
    DaemonProcess.Result r = sandbox.run("/bin/sh", "-c", "(sleep 2; echo late) & echo early");
    assertThat(r.stdoutText()).isEqualTo("early\nlate\n");
    assertThat(r.status().exitCode()).isZero();
  }

  @Test
  @DisplayName("running processes are listed with their tag, argv and cwd; an unknown pid is not found")
  void listing() throws Exception {
    DaemonConnection c = sandbox.conn();
    try (DaemonProcess p = c.start(ProcessSpec.of("/bin/sleep", "300").withTag("napper"))) {
      assertThat(c.processes()).anySatisfy(i -> {
        assertThat(i.pid()).isEqualTo(p.pid());
        assertThat(i.tag()).isEqualTo("napper");
        assertThat(i.argv()).containsExactly("/bin/sleep", "300");
        assertThat(i.cwd()).isEqualTo("/root");
      });
      p.signal(9, false);
      assertThat(p.collect().status().signal()).isEqualTo(9);
      assertThat(c.processes()).noneSatisfy(i -> assertThat(i.pid()).isEqualTo(p.pid()));
    }
    assertThatThrownBy(() -> c.signal(999_999, 9, false))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  private static String text(ProcessEvent e) {
    assertThat(e).isInstanceOf(ProcessEvent.Output.class);
    return new String(((ProcessEvent.Output) e).data(), StandardCharsets.UTF_8);
  }
}
