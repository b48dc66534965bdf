package io.sandboxes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TarsTest {

  @Test
  @DisplayName("a folder packs rooted at its own name and unpacks to the same files, links and modes")
  void roundTrip(@TempDir Path dir) throws Exception {
    Path app = Files.createDirectories(dir.resolve("my-app/src"));
    Files.writeString(app.resolve("main.py"), "print('hi')");
    Path run = Files.writeString(dir.resolve("my-app/run.sh"), "#!/bin/sh\n");
    Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.createSymbolicLink(dir.resolve("my-app/latest"), Path.of("src"));
    Path out = dir.resolve("out");
    Tars.unpack(Tars.pack(dir.resolve("my-app")), out);
    assertThat(Files.readString(out.resolve("my-app/src/main.py"))).isEqualTo("print('hi')");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("my-app/run.sh")))).isEqualTo("rwxr-xr-x");
    assertThat(Files.readSymbolicLink(out.resolve("my-app/latest"))).isEqualTo(Path.of("src"));
  }

  @Test
  @DisplayName("entries or links that would land outside the folder are refused; setuid bits are dropped")
  void safety(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> Tars.unpack(archive("../escape.txt", "x", null, 0644), dir.resolve("a")))
        .isInstanceOf(SandboxException.class).hasMessageContaining("outside");
    assertThatThrownBy(() -> Tars.unpack(archive("link", null, "/etc/passwd", 0777), dir.resolve("b")))
        .isInstanceOf(SandboxException.class).hasMessageContaining("points outside");
    Tars.unpack(archive("tool", "bin", null, 04755), dir.resolve("c"));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("c/tool")))).isEqualTo("rwxr-xr-x");
    assertThat(Files.exists(dir.resolve("escape.txt"))).isFalse();
  }

  private static ByteArrayInputStream archive(String name, String content, String link, int mode) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
      TarArchiveEntry e = link != null ? new TarArchiveEntry(name, TarArchiveEntry.LF_SYMLINK) : new TarArchiveEntry(name);
      if (link != null) {
        e.setLinkName(link);
      }
      byte[] data = content == null ? new byte[0] : content.getBytes(StandardCharsets.UTF_8);
      e.setSize(data.length);
      e.setMode(mode);
      out.putArchiveEntry(e);
      out.write(data);
      out.closeArchiveEntry();
    }
    return new ByteArrayInputStream(bytes.toByteArray());
  }
}
