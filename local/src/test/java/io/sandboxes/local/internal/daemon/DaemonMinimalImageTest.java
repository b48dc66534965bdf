package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A template with no userland at all: an image imported from a tar holding only /etc/passwd, a
 * home folder and one static program. No shell, no python, no libc: the daemon still serves it.
 */
class DaemonMinimalImageTest {
  private static String image;
  private static DaemonSandbox sandbox;

  @BeforeAll
  static void up() throws Exception {
    DockerRuntime docker = DockerRuntime.connect();
    Path tar = Files.createTempFile("sandboxes-minimal-", ".tar");
    try (OutputStream out = Files.newOutputStream(tar); TarArchiveOutputStream t = new TarArchiveOutputStream(out)) {
      dir(t, "etc/", 0, 0755);
      file(t, "etc/passwd", "root:x:0:0:root:/root:/nonexistent\nuser:x:1000:1000:user:/home/user:/nonexistent\n"
          .getBytes(StandardCharsets.UTF_8), 0, 0644);
      dir(t, "root/", 0, 0700);
      dir(t, "home/", 0, 0755);
      dir(t, "home/user/", 1000, 0755);
      dir(t, "bin/", 0, 0755);
      // the one program: a static binary (the daemon itself, in its probe mode)
      file(t, "bin/probe", DaemonBinary.bytes(), 0, 0755);
    }
    String tag = UUID.randomUUID().toString().substring(0, 8);
    docker.importImage(tar, "sandboxes-local/test-minimal", tag);
    Files.delete(tar);
    image = "sandboxes-local/test-minimal:" + tag;
    sandbox = DaemonSandbox.start(image, Map.of());
  }

  private static void dir(TarArchiveOutputStream t, String name, int uid, int mode) throws Exception {
    TarArchiveEntry e = new TarArchiveEntry(name);
    e.setIds(uid, uid);
    e.setMode(040000 | mode);
    t.putArchiveEntry(e);
    t.closeArchiveEntry();
  }

  private static void file(TarArchiveOutputStream t, String name, byte[] data, int uid, int mode) throws Exception {
    TarArchiveEntry e = new TarArchiveEntry(name);
    e.setIds(uid, uid);
    e.setMode(0100000 | mode);
    e.setSize(data.length);
    t.putArchiveEntry(e);
    t.write(data);
    t.closeArchiveEntry();
  }

  @AfterAll
  static void down() throws Exception {
    try {
      if (sandbox != null) {
        sandbox.close();
      }
    } finally {
      if (image != null) {
        DockerRuntime.connect().client().removeImageCmd(image).withForce(true).exec();
      }
    }
  }

  @Test
  @DisplayName("a program given by absolute path runs as the user from /etc/passwd, in its home, with its exit code")
  void runsWithoutShell() throws Exception {
    DaemonConnection c = sandbox.conn();
    DaemonProcess.Result r;
    try (DaemonProcess p = c.start(ProcessSpec.of("/bin/probe", "probe", "hello", "--exit", "5").asUser("user"))) {
      r = p.collect();
    }
    assertThat(r.stdoutText()).isEqualTo("uid=1000 gid=1000 cwd=/home/user home=/home/user hello\n");
    assertThat(r.status()).isEqualTo(new ExitStatus(true, 5, 0, false));
    assertThatThrownBy(() -> c.start(ProcessSpec.of("/bin/sh", "-c", "true")))
        .isInstanceOfSatisfying(DaemonException.class, e -> assertThat(e.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  @Test
  @DisplayName("files work there too: a write as the user creates its parents, and the listing names the owner from /etc/passwd")
  void filesWithoutShell() throws Exception {
    DaemonConnection c = sandbox.conn();
    c.writeFile("notes/a.txt", "user", new ByteArrayInputStream("hi".getBytes(StandardCharsets.UTF_8)), null);
    assertThat(c.list("/home/user", "user", 2)).extracting(EntryInfo::path, EntryInfo::owner)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("/home/user/notes", "user"),
            org.assertj.core.groups.Tuple.tuple("/home/user/notes/a.txt", "user"));
    try (FileRead r = c.readFile("/home/user/notes/a.txt", "user")) {
      assertThat(r.readAllBytes()).isEqualTo("hi".getBytes(StandardCharsets.UTF_8));
    }
  }
}
