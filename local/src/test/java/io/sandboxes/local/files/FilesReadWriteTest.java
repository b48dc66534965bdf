package io.sandboxes.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxFilePermissionException;
import io.sandboxes.SandboxNotEnoughSpaceException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.FileOptions;
import io.sandboxes.e2b.FileType;
import io.sandboxes.e2b.Filesystem;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.WriteEntry;
import io.sandboxes.e2b.WriteInfo;
import io.sandboxes.local.SharedServer;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24 item 2: reading and writing through {@code sandbox.files()} against the real local
 * server: text, bytes, a stream source, several files in one call, what each write answers, the
 * user a call runs as, metadata, gzip, and the typed errors (not found, no permission, full disk).
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FilesReadWriteTest {
  private LiveSandbox sandbox;
  private Filesystem files;

  @BeforeAll
  void start(E2BApi e2b) {
    sandbox = e2b.create();
    files = sandbox.files();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @DisplayName("text, bytes and a stream source round-trip; each write answers the file's absolute path, name and type; a relative path lands in the user's home")
  void roundTrips() {
    WriteInfo text = files.write("/home/user/rw/note.txt", "héllo\nwörld");
    assertThat(text.path()).isEqualTo("/home/user/rw/note.txt");
    assertThat(text.name()).isEqualTo("note.txt");
    assertThat(text.type()).isEqualTo(FileType.FILE);
    assertThat(files.read("/home/user/rw/note.txt")).isEqualTo("héllo\nwörld");

    byte[] binary = new byte[256];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) i;
    }
    files.write("/home/user/rw/all.bin", binary);
    assertThat(files.readBytes("/home/user/rw/all.bin")).isEqualTo(binary);

    WriteInfo streamed = files.write("rw/from-stream.txt", new ByteArrayInputStream("through a stream".getBytes(StandardCharsets.UTF_8)));
    assertThat(streamed.path()).isEqualTo("/home/user/rw/from-stream.txt");
    assertThat(sandbox.exec("cat /home/user/rw/from-stream.txt").stdout()).isEqualTo("through a stream");

    files.write("/home/user/rw/empty.txt", new byte[0]);
    assertThat(files.readBytes("/home/user/rw/empty.txt")).isEmpty();
  }

  @Test
  @DisplayName("several files, bytes and streams mixed, in one call: each written, one answer per file in order")
  void severalFiles() {
    List<WriteInfo> written = files.write(List.of(
        WriteEntry.of("/home/user/multi/a.txt", "first"),
        WriteEntry.of("/home/user/multi/deeper/b.bin", new byte[] {0, 1, 2, (byte) 0xff}),
        WriteEntry.of("multi/c.txt", new ByteArrayInputStream("third, streamed".getBytes(StandardCharsets.UTF_8)))));
    assertThat(written).extracting(WriteInfo::path)
        .containsExactly("/home/user/multi/a.txt", "/home/user/multi/deeper/b.bin", "/home/user/multi/c.txt");
    assertThat(files.read("/home/user/multi/a.txt")).isEqualTo("first");
    assertThat(files.readBytes("/home/user/multi/deeper/b.bin")).containsExactly(0, 1, 2, 0xff);
    assertThat(files.read("/home/user/multi/c.txt")).isEqualTo("third, streamed");
    assertThat(files.write(List.of())).isEmpty();
  }

  @Test
  @DisplayName("several files in one call whose first is refused (a read-only mount, which root cannot write either) while 960 KiB of later parts are still being sent: a typed permission error naming it, and no later file written")
  void severalFilesFirstRefused() {
    java.util.ArrayList<WriteEntry> entries = new java.util.ArrayList<>(List.of(WriteEntry.of("/sys/refused.txt", "no")));
    byte[] big = new byte[64 * 1024];
    for (int i = 0; i < 15; i++) {
      entries.add(WriteEntry.of("/home/user/refused-later/" + i + ".bin", big));
    }
    assertThatThrownBy(() -> files.write(entries))
        .isInstanceOfSatisfying(SandboxFilePermissionException.class, e -> assertThat(e.getMessage()).contains("/sys/refused.txt"));
    assertThat(files.exists("/home/user/refused-later/0.bin")).isFalse();
  }

  @Test
  @DisplayName("a call as root writes root's files; the default user's write goes where E2B's does (as root, then given to the user, folders it made included), while its read of root's file is a typed permission error")
  void user() {
    FileOptions root = FileOptions.defaults().withUser("root");
    WriteInfo w = files.write("/root/secret.txt", "root only", root);
    assertThat(w.path()).isEqualTo("/root/secret.txt");
    assertThat(files.read("/root/secret.txt", root)).isEqualTo("root only");
    assertThat(files.getInfo("/root/secret.txt", root).owner()).isEqualTo("root");
    assertThat(files.write("relative.txt", "in root's home", root).path()).isEqualTo("/root/relative.txt");

    assertThatThrownBy(() -> files.read("/root/secret.txt"))
        .isInstanceOfSatisfying(SandboxFilePermissionException.class, e -> {
          assertThat(e.path()).isEqualTo("/root/secret.txt");
          assertThat(e.code()).isEqualTo("permission_denied");
        });
    assertThatThrownBy(() -> files.list("/root")).isInstanceOf(SandboxFilePermissionException.class);

    // the official suite's "write multiple files" writes under /0, a folder only root may create
    assertThat(files.write("/root/other.txt", "the user's").path()).isEqualTo("/root/other.txt");
    assertThat(files.write("/0/official/a.txt", "a").path()).isEqualTo("/0/official/a.txt");
    for (String p : List.of("/root/other.txt", "/0", "/0/official", "/0/official/a.txt")) {
      assertThat(files.getInfo(p, root).owner()).as(p).isEqualTo("user");
      assertThat(files.getInfo(p, root).group()).as(p).isEqualTo("user");
    }
    assertThat(files.getInfo("/root", root).owner()).isEqualTo("root");
    // written over, root's file becomes the user's, as with E2B's envd
    assertThat(files.write("/root/secret.txt", "now the user's").path()).isEqualTo("/root/secret.txt");
    assertThat(files.getInfo("/root/secret.txt", root).owner()).isEqualTo("user");
    assertThat(files.read("/root/secret.txt", root)).isEqualTo("now the user's");
  }

  @Test
  @DisplayName("a read of what is not there is SandboxFileNotFoundException naming the path, also streamed")
  void notFound() {
    assertThatThrownBy(() -> files.read("/home/user/nothing-here.txt"))
        .isInstanceOfSatisfying(SandboxFileNotFoundException.class, e -> assertThat(e.path()).isEqualTo("/home/user/nothing-here.txt"));
    assertThatThrownBy(() -> files.readStream("/home/user/nothing-here.txt")).isInstanceOf(SandboxFileNotFoundException.class);
  }

  @Test
  @DisplayName("metadata given on a write is answered by the write and kept on the file; gzip writes (bytes and stream) and gzip reads round-trip")
  void metadataAndGzip() {
    WriteInfo w = files.write("/home/user/meta.txt", "with metadata", FileOptions.defaults().withMetadata(Map.of("Owner-Team", "data")));
    assertThat(w.metadata()).containsEntry("owner-team", "data");
    assertThat(files.getInfo("/home/user/meta.txt").metadata()).containsExactlyEntriesOf(Map.of("owner-team", "data"));

    FileOptions gzip = FileOptions.defaults().withGzip(true);
    String text = "compressible ".repeat(10_000);
    files.write("/home/user/gz/a.txt", text, gzip);
    files.write("/home/user/gz/b.txt", new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), gzip);
    files.write(List.of(WriteEntry.of("/home/user/gz/c.txt", text)), gzip);
    assertThat(sandbox.exec("sha256sum < /home/user/gz/a.txt; sha256sum < /home/user/gz/b.txt; sha256sum < /home/user/gz/c.txt")
        .stdout().lines().distinct()).hasSize(1);
    assertThat(files.read("/home/user/gz/a.txt", gzip)).isEqualTo(text);
  }

  @Test
  @DisplayName("a write the sandbox's disk cannot hold is SandboxNotEnoughSpaceException")
  void fullDisk() {
    assertThat(sandbox.exec("head -c 63M /dev/zero > /dev/shm/fill").exitCode()).isZero();
    try {
      assertThatThrownBy(() -> files.write("/dev/shm/big.bin", new byte[4 << 20]))
          .isInstanceOf(SandboxNotEnoughSpaceException.class).hasMessageContaining("/dev/shm/big.bin");
    } finally {
      sandbox.exec("rm -f /dev/shm/fill /dev/shm/big.bin");
    }
  }

  @Test
  @DisplayName("bad input is refused before anything is sent: null or empty paths, null content, metadata that cannot travel")
  void badInput() {
    assertThatThrownBy(() -> files.read(null)).isInstanceOf(NullPointerException.class).hasMessage("path");
    assertThatThrownBy(() -> files.write("", "x")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("path");
    assertThatThrownBy(() -> files.write("/tmp/x", (String) null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> files.write((List<WriteEntry>) null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> FileOptions.defaults().withMetadata(Map.of("bad key", "v"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FileOptions.defaults().withMetadata(Map.of("k", "é"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FileOptions.defaults().withRequestTimeout(java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
