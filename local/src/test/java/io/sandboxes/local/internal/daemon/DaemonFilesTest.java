package io.sandboxes.local.internal.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Files through the daemon in a real container of the base image, with a 1 MiB tmpfs (and a 2 MiB one measured alone). */
class DaemonFilesTest {
  private static DaemonSandbox sandbox;
  private static DaemonConnection c;

  @BeforeAll
  static void up() throws Exception {
    sandbox = DaemonSandbox.start(io.sandboxes.local.internal.docker.BaseImage.reference(), Map.of("/small", "size=1m", "/fs", "size=2m"));
    c = sandbox.conn();
  }

  @AfterAll
  static void down() throws Exception {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private static InputStream text(String s) {
    return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
  }

  /** A source that yields some bytes and then fails, like an upload cut off midway. */
  private static InputStream failingAfter(int bytes) {
    return new InputStream() {
      int left = bytes;

      @Override
      public int read() throws IOException {
        byte[] b = new byte[1];
        return read(b, 0, 1) < 0 ? -1 : b[0];
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        if (left == 0) {
          throw new IOException("the upload broke off");
        }
        int n = Math.min(len, left);
        Arrays.fill(b, off, off + n, (byte) 'x');
        left -= n;
        return n;
      }
    };
  }

  /**
   * The daemon's loop waits up to a second when it has nothing to do; a frame queued just before
   * that wait (a read's end after its last chunk, a listing's last entries) must not sit out the
   * second. Ten reads of a small file and ten listings: the median of each is held far under the
   * second such a wait costs (a few milliseconds each here), so one slow call on a loaded machine
   * does not fail it and the wait does.
   */
  @Test
  @DisplayName("a small file's read and a folder's listing end at once, not after the daemon's idle wait")
  void endsAtOnce() throws Exception {
    c.writeFile("/home/user/small.txt", "user", text("small"), null);
    java.util.List<Long> reads = new java.util.ArrayList<>();
    java.util.List<Long> lists = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      long t = System.nanoTime();
      try (FileRead r = c.readFile("/home/user/small.txt", "user")) {
        assertThat(r.readAllBytes()).isEqualTo("small".getBytes(StandardCharsets.UTF_8));
      }
      reads.add((System.nanoTime() - t) / 1_000_000);
      t = System.nanoTime();
      assertThat(c.list("/etc", "user", 1)).isNotEmpty();
      lists.add((System.nanoTime() - t) / 1_000_000);
    }
    reads.sort(null);
    lists.sort(null);
    assertThat(reads.get(5)).as("median read (ms) of %s", reads).isLessThan(400);
    assertThat(lists.get(5)).as("median listing (ms) of %s", lists).isLessThan(400);
  }

  @Test
  @DisplayName("a write whose source fails midway leaves the old file whole and no temporary file behind")
  void atomicWrite() throws Exception {
    c.writeFile("/home/user/keep.txt", "user", text("old content"), null);
    assertThatThrownBy(() -> c.writeFile("/home/user/keep.txt", "user", failingAfter(3 * DaemonConnection.CHUNK + 10), null))
        .hasMessage("the upload broke off");
    try (FileRead r = c.readFile("/home/user/keep.txt", "user")) {
      assertThat(new String(r.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("old content");
    }
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> sandbox.sh("ls -A /home/user | grep -c envd || true").strip().equals("0"));
  }

  @Test
  @DisplayName("missing parents are created and belong to the user; a read streams the bytes back exactly")
  void parentsOwnedByUser() throws Exception {
    byte[] data = new byte[3 * 1024 * 1024 + 17];
    new Random(7).nextBytes(data);
    EntryInfo e = c.writeFile("/home/user/a/b/c/data.bin", "user", new ByteArrayInputStream(data), null);
    assertThat(e.size()).isEqualTo(data.length);
    assertThat(e.uid()).isEqualTo(1000);
    assertThat(e.owner()).isEqualTo("user");
    assertThat(e.permissions()).isEqualTo(0644);
    assertThat(sandbox.sh("stat -c '%u:%g %a' /home/user/a /home/user/a/b /home/user/a/b/c"))
        .isEqualTo("1000:1000 755\n1000:1000 755\n1000:1000 755\n");
    try (FileRead r = c.readFile("/home/user/a/b/c/data.bin", "user")) {
      assertThat(r.entry().size()).isEqualTo(data.length);
      assertThat(r.readAllBytes()).isEqualTo(data);
    }
    // as E2B's envd: a write for the user goes where root may, and leaves the user's file and folders
    assertThat(c.writeFile("/root/x/y.txt", "user", text("yes"), null).uid()).isEqualTo(1000);
    assertThat(sandbox.sh("stat -c '%u:%g' /root /root/x /root/x/y.txt")).isEqualTo("0:0\n1000:1000\n1000:1000\n");
    assertThat(c.writeFile("/root/z.txt", "root", text("yes"), null).uid()).isZero();
  }

  @Test
  @DisplayName("a full disk is NO_SPACE, its own kind, and leaves nothing behind")
  void noSpace() throws Exception {
    byte[] big = new byte[2 * 1024 * 1024];
    assertThatThrownBy(() -> c.writeFile("/small/big.bin", "root", new ByteArrayInputStream(big), null))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NO_SPACE));
    assertThat(c.list("/small", "root", 1)).isEmpty();
    assertThat(c.writeFile("/small/fits.txt", "root", text("ok"), null).size()).isEqualTo(2);
  }

  @Test
  @DisplayName("a listing is in envd's order: each folder's names in byte order, depth first, with types, sizes and link targets")
  void listing() throws Exception {
    sandbox.sh("mkdir -p /tmp/l/b.d /tmp/l/a && echo 12345 > /tmp/l/a/x && touch /tmp/l/B /tmp/l/a.txt /tmp/l/b.d/y "
        + "&& ln -s /tmp/l/a /tmp/l/link && ln -s /nowhere /tmp/l/broken");
    List<EntryInfo> depth1 = c.list("/tmp/l", "root", 1);
    assertThat(depth1).extracting(EntryInfo::name).containsExactly("B", "a", "a.txt", "b.d", "broken", "link");
    List<EntryInfo> depth2 = c.list("/tmp/l", "root", 2);
    assertThat(depth2).extracting(EntryInfo::path).containsExactly(
        "/tmp/l/B", "/tmp/l/a", "/tmp/l/a/x", "/tmp/l/a.txt", "/tmp/l/b.d", "/tmp/l/b.d/y", "/tmp/l/broken", "/tmp/l/link");
    EntryInfo x = depth2.get(2);
    assertThat(x.type()).isEqualTo(EntryInfo.Type.FILE);
    assertThat(x.size()).isEqualTo(6);
    EntryInfo link = depth2.get(7);
    assertThat(link.type()).isEqualTo(EntryInfo.Type.SYMLINK);
    assertThat(link.symlinkTarget()).isEqualTo("/tmp/l/a");
    assertThat(link.targetType()).isEqualTo(EntryInfo.Type.DIRECTORY);
    EntryInfo broken = depth2.get(6);
    assertThat(broken.symlinkTarget()).isEqualTo("/nowhere");
    assertThat(broken.targetType()).isNull();
    assertThatThrownBy(() -> c.list("/tmp/l/B", "root", 1))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NOT_DIRECTORY));
    assertThatThrownBy(() -> c.list("/tmp/none", "root", 1))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  @Test
  @DisplayName("metadata round-trips as user.e2b.* attributes; a rewrite without metadata keeps it, one with metadata replaces it")
  void metadata() throws Exception {
    EntryInfo e = c.writeFile("/home/user/meta.txt", "user", text("v1"), Map.of("owner", "alice", "stage", "draft"));
    assertThat(e.metadata()).isEqualTo(Map.of("owner", "alice", "stage", "draft"));
    assertThat(new String(c.xattrs("/home/user/meta.txt", "user", "user.e2b.").get("user.e2b.owner"), StandardCharsets.UTF_8))
        .isEqualTo("alice");
    assertThat(c.writeFile("/home/user/meta.txt", "user", text("v2"), null).metadata()).containsEntry("stage", "draft");
    assertThat(c.writeFile("/home/user/meta.txt", "user", text("v3"), Map.of("stage", "final")).metadata())
        .isEqualTo(Map.of("stage", "final"));
    c.setXattrs("/home/user/meta.txt", "user", "user.e2b.", Map.of("user.e2b.k", "v".getBytes(StandardCharsets.UTF_8)));
    assertThat(c.stat("/home/user/meta.txt", "user").metadata()).isEqualTo(Map.of("k", "v"));
  }

  @Test
  @DisplayName("a file system's use as df counts it: the 2 MiB tmpfs agrees with df run beside it, the root's size too; a write shows; a missing path is NOT_FOUND")
  void fileSystemUse() throws Exception {
    DaemonConnection.FileSystemInfo tmpfs = c.fileSystem("/fs", "root", Duration.ofSeconds(5));
    assertThat(tmpfs.size()).isEqualTo(2 * 1024 * 1024);
    assertThat(tmpfs.used() + tmpfs.available()).isLessThanOrEqualTo(tmpfs.size());
    for (String path : List.of("/", "/fs")) {
      DaemonConnection.FileSystemInfo fs = c.fileSystem(path, "user", Duration.ofSeconds(5));
      String[] df = new String(sandbox.run("df", "-B1", "--output=size,used,avail", path).stdout(), StandardCharsets.UTF_8)
          .strip().split("\n")[1].strip().split("\\s+");
      assertThat(fs.size()).as(path).isEqualTo(Long.parseLong(df[0]));
      if (path.equals("/fs")) {
        // nothing else writes there; the root is the host's disk, which whatever runs beside fills as it likes
        assertThat(fs.used()).as(path).isEqualTo(Long.parseLong(df[1]));
        assertThat(fs.available()).as(path).isEqualTo(Long.parseLong(df[2]));
      } else {
        assertThat(fs.used()).as(path).isPositive().isLessThanOrEqualTo(fs.size());
      }
    }
    long before = c.fileSystem("/fs", "root", Duration.ofSeconds(5)).used();
    c.writeFile("/fs/statfs.bin", "root", new ByteArrayInputStream(new byte[256 * 1024]), null);
    try {
      assertThat(c.fileSystem("/fs/statfs.bin", "root", Duration.ofSeconds(5)).used()).isGreaterThanOrEqualTo(before + 256 * 1024);
    } finally {
      c.remove("/fs/statfs.bin", "root");
    }
    assertThatThrownBy(() -> c.fileSystem("/nowhere/at/all", "root", Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  @Test
  @DisplayName("mkdir -p, rename, remove and stat, with envd's not-found and already-exists")
  void folderOperations() throws Exception {
    EntryInfo d = c.makeDirs("~/p/q/r", "user");
    assertThat(d.path()).isEqualTo("/home/user/p/q/r");
    assertThat(d.type()).isEqualTo(EntryInfo.Type.DIRECTORY);
    assertThat(d.uid()).isEqualTo(1000);
    assertThatThrownBy(() -> c.makeDirs("/home/user/p/q", "user"))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.EXISTS));
    c.writeFile("p/q/r/f.txt", "user", text("f"), null);
    assertThat(c.rename("p/q/r/f.txt", "p/g.txt", "user").path()).isEqualTo("/home/user/p/g.txt");
    c.remove("/home/user/p", "user");
    assertThatThrownBy(() -> c.stat("/home/user/p", "user"))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
    assertThatThrownBy(() -> c.remove("/home/user/p", "user"))
        .isInstanceOfSatisfying(DaemonException.class, ex -> assertThat(ex.kind()).isEqualTo(DaemonException.Kind.NOT_FOUND));
  }

  @Test
  @DisplayName("a folder that arrives already full (moved in) has its contents reported: inotify never saw them made")
  void watchReportsWhatANewFolderHolds() throws Exception {
    c.makeDirs("/tmp/wm", "root");
    sandbox.sh("mkdir -p /tmp/stage/t/sub && echo hi > /tmp/stage/t/sub/f && touch /tmp/stage/t/empty");
    try (DaemonWatch w = c.watch("/tmp/wm", "root", true)) {
      sandbox.sh("mv /tmp/stage/t /tmp/wm/t");
      java.util.List<WatchEvent> seen = new java.util.ArrayList<>();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
        WatchEvent e = w.next(Duration.ofMillis(100));
        if (e != null) {
          seen.add(e);
        }
        return seen.contains(new WatchEvent(WatchEvent.Kind.WRITE, "t/sub/f"));
      });
      assertThat(seen).contains(new WatchEvent(WatchEvent.Kind.CREATE, "t"), new WatchEvent(WatchEvent.Kind.CREATE, "t/sub"),
          new WatchEvent(WatchEvent.Kind.CREATE, "t/sub/f"), new WatchEvent(WatchEvent.Kind.CREATE, "t/empty"))
          .doesNotContain(new WatchEvent(WatchEvent.Kind.WRITE, "t/empty"));
    }
  }

  @Test
  @DisplayName("a watch reports creation, writes and removal under the folder, recursively")
  void watch() throws Exception {
    c.makeDirs("/tmp/w", "root");
    try (DaemonWatch w = c.watch("/tmp/w", "root", true)) {
      sandbox.sh("mkdir /tmp/w/sub && sleep 0.2 && echo hi > /tmp/w/sub/f && rm /tmp/w/sub/f");
      java.util.List<WatchEvent> seen = new java.util.ArrayList<>();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
        WatchEvent e = w.next(Duration.ofMillis(100));
        if (e != null) {
          seen.add(e);
        }
        return seen.contains(new WatchEvent(WatchEvent.Kind.REMOVE, "sub/f"));
      });
      assertThat(seen).contains(new WatchEvent(WatchEvent.Kind.CREATE, "sub"), new WatchEvent(WatchEvent.Kind.CREATE, "sub/f"),
          new WatchEvent(WatchEvent.Kind.WRITE, "sub/f"));
    }
  }
}
