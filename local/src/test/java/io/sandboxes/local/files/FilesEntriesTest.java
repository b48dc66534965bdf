package io.sandboxes.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.DirEntry;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.EntryInfo;
import io.sandboxes.e2b.FileOptions;
import io.sandboxes.e2b.FileType;
import io.sandboxes.e2b.Filesystem;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.SharedServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24 item 2: the file system's entries through {@code sandbox.files()} against the real
 * local server: listing to a depth, making folders, renaming, removing, whether a path exists (and
 * that only a real "not found" is false), and what {@code getInfo} says of files, folders and links.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FilesEntriesTest {
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

  private static Map<String, EntryInfo> byPath(List<EntryInfo> entries) {
    return entries.stream().collect(Collectors.toMap(EntryInfo::path, Function.identity()));
  }

  @Test
  @DisplayName("list to depth 1 and 2: each entry's absolute path and type, the folder itself left out; a depth below 1 is refused")
  void listDepth() {
    assertThat(sandbox.exec("mkdir -p /home/user/tree/a/b && echo one > /home/user/tree/top.txt && echo two > /home/user/tree/a/mid.txt"
        + " && echo three > /home/user/tree/a/b/deep.txt").exitCode()).isZero();
    Map<String, EntryInfo> one = byPath(files.list("/home/user/tree"));
    assertThat(one.keySet()).containsExactlyInAnyOrder("/home/user/tree/a", "/home/user/tree/top.txt");
    assertThat(one.get("/home/user/tree/a").type()).isEqualTo(FileType.DIR);
    assertThat(one.get("/home/user/tree/top.txt").type()).isEqualTo(FileType.FILE);
    assertThat(one.get("/home/user/tree/top.txt").size()).isEqualTo(4L);

    Map<String, EntryInfo> two = byPath(files.list("/home/user/tree", 2));
    assertThat(two.keySet()).containsExactlyInAnyOrder("/home/user/tree/a", "/home/user/tree/top.txt", "/home/user/tree/a/mid.txt",
        "/home/user/tree/a/b");
    assertThat(byPath(files.list("tree", 3))).containsKey("/home/user/tree/a/b/deep.txt");

    assertThatThrownBy(() -> files.list("/home/user/tree", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("depth");
    assertThatThrownBy(() -> files.list("/home/user/tree", -1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> files.list("/home/user/no-such-tree")).isInstanceOf(SandboxFileNotFoundException.class);
  }

  @Test
  @DisplayName("makeDir makes missing parents and answers true, then false for a folder already there; a file in the way is an error, not false")
  void makeDir() {
    assertThat(files.makeDir("/home/user/made/x/y")).isTrue();
    assertThat(files.getInfo("/home/user/made/x/y").type()).isEqualTo(FileType.DIR);
    assertThat(files.makeDir("/home/user/made/x/y")).isFalse();
    files.write("/home/user/made/file", "in the way");
    assertThatThrownBy(() -> files.makeDir("/home/user/made/file")).isInstanceOf(SandboxRpcException.class);
    assertThat(files.makeDir("/home/user/made/as-root", FileOptions.defaults().withUser("root"))).isTrue();
    assertThat(files.getInfo("/home/user/made/as-root").owner()).isEqualTo("root");
  }

  @Test
  @DisplayName("rename moves a file (making the destination's folders) and answers its entry at the new path; a missing source is not found")
  void rename() {
    files.write("/home/user/mv/src.txt", "moving");
    EntryInfo moved = files.rename("/home/user/mv/src.txt", "/home/user/mv/into/new/dst.txt");
    assertThat(moved.path()).isEqualTo("/home/user/mv/into/new/dst.txt");
    assertThat(moved.name()).isEqualTo("dst.txt");
    assertThat(moved.size()).isEqualTo(6L);
    assertThat(files.exists("/home/user/mv/src.txt")).isFalse();
    assertThat(files.read("/home/user/mv/into/new/dst.txt")).isEqualTo("moving");
    assertThatThrownBy(() -> files.rename("/home/user/mv/gone.txt", "/home/user/mv/x.txt"))
        .isInstanceOfSatisfying(SandboxFileNotFoundException.class, e -> assertThat(e.path()).isEqualTo("/home/user/mv/gone.txt"));
  }

  @Test
  @DisplayName("remove takes a file or a whole folder, and removing what is not there succeeds")
  void remove() {
    files.write("/home/user/rm/a/b.txt", "x");
    files.remove("/home/user/rm/a/b.txt");
    assertThat(files.exists("/home/user/rm/a/b.txt")).isFalse();
    files.write("/home/user/rm/a/c.txt", "x");
    files.remove("/home/user/rm");
    assertThat(files.exists("/home/user/rm")).isFalse();
    files.remove("/home/user/rm");
  }

  @Test
  @DisplayName("exists is false only for the daemon's 'not found': a call it refuses (an unknown user) throws rather than answering false")
  void exists() {
    files.write("/home/user/ex.txt", "here");
    assertThat(files.exists("/home/user/ex.txt")).isTrue();
    assertThat(files.exists("/home/user")).isTrue();
    assertThat(files.exists("/home/user/not-there.txt")).isFalse();
    assertThatThrownBy(() -> files.exists("/home/user/ex.txt", FileOptions.defaults().withUser("no-such-user")))
        .isInstanceOf(SandboxRpcException.class).isNotInstanceOf(SandboxFileNotFoundException.class);
  }

  @Test
  @DisplayName("getInfo gives type, size, mode, permissions, owner, group, modified time, symlink target and metadata")
  void getInfo() {
    assertThat(sandbox.exec("mkdir -p /home/user/info && printf 12345 > /home/user/info/f.txt && chmod 640 /home/user/info/f.txt"
        + " && ln -s /home/user/info/f.txt /home/user/info/link && ln -s /home/user/info /home/user/info/dirlink").exitCode()).isZero();
    EntryInfo f = files.getInfo("/home/user/info/f.txt");
    assertThat(f.name()).isEqualTo("f.txt");
    assertThat(f.type()).isEqualTo(FileType.FILE);
    assertThat(f.size()).isEqualTo(5L);
    assertThat(f.mode()).isEqualTo(0640);
    assertThat(f.permissions()).isEqualTo("-rw-r-----");
    assertThat(f.owner()).isEqualTo("user");
    assertThat(f.group()).isEqualTo("user");
    assertThat(f.modifiedTime()).isNotNull().isBetween(Instant.now().minus(Duration.ofMinutes(5)), Instant.now().plus(Duration.ofMinutes(5)));
    assertThat(f.symlinkTarget()).isNull();
    assertThat(f.isSymlink()).isFalse();
    assertThat(f.metadata()).isEmpty();

    EntryInfo link = files.getInfo("/home/user/info/link");
    assertThat(link.isSymlink()).isTrue();
    assertThat(link.symlinkTarget()).isEqualTo("/home/user/info/f.txt");
    assertThat(link.type()).isEqualTo(FileType.FILE);

    EntryInfo dir = files.getInfo("/home/user/info");
    assertThat(dir.type()).isEqualTo(FileType.DIR);
    assertThat(dir.permissions()).startsWith("d");
    assertThat(files.getInfo("/home/user/info/dirlink").type()).isEqualTo(FileType.DIR);

    List<DirEntry> contract = sandbox.readDir("/home/user/info");
    assertThat(contract).extracting(DirEntry::name, DirEntry::type).containsExactlyInAnyOrder(
        org.assertj.core.groups.Tuple.tuple("f.txt", DirEntry.Type.FILE), org.assertj.core.groups.Tuple.tuple("link", DirEntry.Type.SYMLINK),
        org.assertj.core.groups.Tuple.tuple("dirlink", DirEntry.Type.SYMLINK));
    assertThatThrownBy(() -> files.getInfo("/home/user/info/none")).isInstanceOf(SandboxFileNotFoundException.class);
    assertThatThrownBy(() -> files.getInfo(null)).isInstanceOf(NullPointerException.class);
  }
}
