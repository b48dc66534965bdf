package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cgroup reader on a real file system laid out as the kernel lays cgroups out: which mounts
 * it takes, v2's files, and that it follows no symlink and reads no oversized file.
 */
class CgroupReaderTest {
  private static final String ID = "ab".repeat(32);

  @Test
  @DisplayName("mount table: v1 cpuacct+memory when both are mounted at their root, else v2; a namespaced mount is not taken")
  void layout() {
    List<String> hybrid = List.of(
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
        "33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw");
    assertThat(CgroupReader.layout(hybrid))
        .isEqualTo(new CgroupReader.Layout(1, Path.of("/sys/fs/cgroup/cpu,cpuacct"), Path.of("/sys/fs/cgroup/memory")));
    assertThat(CgroupReader.layout(List.of("29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate")))
        .isEqualTo(new CgroupReader.Layout(2, Path.of("/sys/fs/cgroup"), Path.of("/sys/fs/cgroup")));
    assertThat(CgroupReader.layout(List.of("29 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw"))).isNull();
    assertThat(CgroupReader.layout(List.of("29 23 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw")).cpu())
        .isEqualTo(Path.of("/sys/fs/my cgroup"));
  }

  private static Path v1(Path root) throws IOException {
    Path cpu = Files.createDirectories(root.resolve("cpuacct/docker/" + ID));
    Files.writeString(cpu.resolve("cpuacct.usage"), "5000000000\n");
    Path mem = Files.createDirectories(root.resolve("memory/docker/" + ID));
    Files.writeString(mem.resolve("memory.usage_in_bytes"), "300\n");
    Files.writeString(mem.resolve("memory.stat"), "cache 50\nrss 250\ntotal_cache 100\n");
    Files.writeString(mem.resolve("memory.limit_in_bytes"), "1073741824\n");
    return root;
  }

  private static CgroupReader v1Reader(Path root) {
    return new CgroupReader(new CgroupReader.Layout(1, root.resolve("cpuacct"), root.resolve("memory")));
  }

  @Test
  @DisplayName("v1 and v2 files are read as the kernel writes them; an idle counter is 0 %, memory is usage less cache")
  void reads(@TempDir Path tmp) throws IOException {
    CgroupReader.Usage u = v1Reader(v1(tmp.resolve("a"))).read(ID, 2);
    assertThat(u).isEqualTo(new CgroupReader.Usage(0.0, 200, 100, 1073741824L));

    Path v2 = Files.createDirectories(tmp.resolve("b/system.slice/docker-" + ID + ".scope"));
    Files.writeString(v2.resolve("cpu.stat"), "usage_usec 7000\nuser_usec 5000\nsystem_usec 2000\n");
    Files.writeString(v2.resolve("memory.current"), "4096\n");
    Files.writeString(v2.resolve("memory.stat"), "anon 3000\nfile 1000\n");
    Files.writeString(v2.resolve("memory.max"), "max\n");
    CgroupReader two = new CgroupReader(new CgroupReader.Layout(2, tmp.resolve("b"), tmp.resolve("b")));
    assertThat(two.read(ID, 1)).isEqualTo(new CgroupReader.Usage(0.0, 3096, 1000, -1));
    assertThat(two.reading(ID).cpuNanos()).isEqualTo(7_000_000L);
  }

  @Test
  @DisplayName("no symlink is followed, neither a folder nor a file; an oversized file, a short id or a missing cgroup is an error, never zero")
  void hostile(@TempDir Path tmp) throws IOException {
    Path root = v1(tmp.resolve("real"));
    Path linked = Files.createDirectories(tmp.resolve("linked/cpuacct/docker"));
    Files.createSymbolicLink(linked.resolve(ID), root.resolve("cpuacct/docker/" + ID));
    Files.createSymbolicLink(tmp.resolve("linked/memory"), root.resolve("memory"));
    CgroupReader viaFolderLink = new CgroupReader(new CgroupReader.Layout(1, linked.getParent(), tmp.resolve("linked/memory")));
    assertThatThrownBy(() -> viaFolderLink.read(ID, 2)).isInstanceOf(IOException.class).hasMessageContaining("symlink");

    Path fileLink = v1(tmp.resolve("filelink"));
    Path usage = fileLink.resolve("cpuacct/docker/" + ID + "/cpuacct.usage");
    Files.delete(usage);
    Files.createSymbolicLink(usage, root.resolve("cpuacct/docker/" + ID + "/cpuacct.usage"));
    assertThatThrownBy(() -> v1Reader(fileLink).read(ID, 2)).isInstanceOf(IOException.class);

    Path big = v1(tmp.resolve("big"));
    Files.writeString(big.resolve("memory/docker/" + ID + "/memory.stat"), "cache 1\n".repeat(10_000));
    assertThatThrownBy(() -> v1Reader(big).read(ID, 2)).isInstanceOf(IOException.class).hasMessageContaining("longer than");

    assertThatThrownBy(() -> v1Reader(root).read("abc", 2)).isInstanceOf(IOException.class).hasMessageContaining("not a full container id");
    assertThatThrownBy(() -> v1Reader(root).read("cd".repeat(32), 2)).isInstanceOf(IOException.class).hasMessageContaining("has no cgroup");
    Files.writeString(root.resolve("memory/docker/" + ID + "/memory.usage_in_bytes"), "-1\n");
    assertThatThrownBy(() -> v1Reader(root).read(ID, 2)).isInstanceOf(IOException.class).hasMessageContaining("not a count");
  }
}
