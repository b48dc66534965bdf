package io.sandboxes.local.internal.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.sandboxes.e2b.TemplateFilesForTests;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, class 6, without Docker: an uploaded COPY archive is read as hostile input. Crafted
 * archives (a gzip bomb, names of 64 KiB, 10 MiB and 256 MiB, an archive not matching its hash,
 * hard links, sparse files) against {@link CopyArchive#repack}; and real contexts on this
 * machine's file systems (ext4 under /tmp, tmpfs under /dev/shm) packed as E2B's SDK packs them
 * (no folder sizes) and as this project's SDK packs them (sizes declared) are found to match
 * their hashes.
 */
class CopyArchiveTest {
  @TempDir
  Path work;

  private static final long MIB = 1024 * 1024;

  private CopyArchive.Step step(String src, String dest, String hash) throws StepFailed {
    return new CopyArchive.Step("1", src, dest, CopyArchive.normalizeSource("1", src), dest, hash);
  }

  private List<String> repack(Path archive, CopyArchive.Step step, long budgetMB, boolean verify) throws Exception {
    return CopyArchive.repack(step, archive, work.resolve("out-" + System.nanoTime() + ".tar"), new BuildBudget(budgetMB), verify);
  }

  /** A context with folders (one big: 200 entries), a nested file, an executable, links inside and out. */
  private static Path context(Path root) throws IOException {
    Path ctx = Files.createDirectories(root.resolve("ctx"));
    Files.createDirectories(ctx.resolve("app/nested/deep"));
    Files.writeString(ctx.resolve("app/run.sh"), "#!/bin/sh\necho hi\n");
    Files.setPosixFilePermissions(ctx.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.writeString(ctx.resolve("app/nested/deep/naïve data.txt"), "deep data\n");
    Files.createSymbolicLink(ctx.resolve("app/inner-link"), Path.of("nested/deep/naïve data.txt"));
    Files.createSymbolicLink(ctx.resolve("app/host-link"), Path.of("/etc/hostname"));
    Path many = Files.createDirectories(ctx.resolve("app/many"));
    for (int i = 0; i < 200; i++) {
      Files.writeString(many.resolve("file-with-a-longish-name-" + i + ".txt"), "n" + i);
    }
    Files.writeString(ctx.resolve("settings.conf"), "mode=test\n");
    return ctx;
  }

  /**
   * Packs a COPY's files as E2B's SDK does (node-tar): the context as "./", folders with a
   * trailing slash and no size, permission bits only, links as links, in the SDK's order.
   */
  private Path packLikeTheOfficialSdk(Path ctx, String src) throws IOException {
    Path out = Files.createTempFile(work, "sdk-", ".tar.gz");
    try (OutputStream file = Files.newOutputStream(out);
        TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(file), "UTF-8")) {
      tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
      tar.setAddPaxHeadersForNonAsciiNames(true);
      for (TemplateFilesForTests.Item i : TemplateFilesForTests.items(ctx, src)) {
        TarArchiveEntry e;
        switch (i.kind()) {
          case "DIRECTORY" -> e = new TarArchiveEntry(i.relative().isEmpty() ? "./" : i.relative() + "/");
          case "LINK" -> {
            e = new TarArchiveEntry(i.relative(), TarConstants.LF_SYMLINK);
            e.setLinkName(i.linkTarget());
          }
          default -> {
            e = new TarArchiveEntry(i.relative());
            e.setSize(i.size());
          }
        }
        e.setMode(i.mode() & 07777);
        tar.putArchiveEntry(e);
        if (i.kind().equals("FILE")) {
          Files.copy(i.path(), tar);
        }
        tar.closeArchiveEntry();
      }
    }
    return out;
  }

  private void officialSdkUploadsMatch(Path root) throws Exception {
    Path ctx = context(root);
    for (String[] c : List.of(new String[] {"app", "/opt/app"}, new String[] {".", "/all/"}, new String[] {"settings.conf", "/etc/"})) {
      String hash = TemplateFilesForTests.hash(ctx, c[0], c[1]);
      Path archive = packLikeTheOfficialSdk(ctx, c[0]);
      assertThat(repack(archive, step(c[0], c[1], hash), 64, true)).as("COPY %s %s", c[0], c[1]).isNotEmpty();
      // and the same upload under another step's hash is not what that hash says
      String other = TemplateFilesForTests.hash(ctx, c[0], c[1] + "x");
      assertThatThrownBy(() -> repack(archive, step(c[0], c[1], other), 64, true)).isInstanceOf(CopyArchive.Mismatch.class)
          .hasMessageContaining("are not what it says");
    }
  }

  @Test
  @DisplayName("E2B's SDK's upload of a context on ext4 (folders without sizes, one of 200 entries) matches its hash")
  void officialSdkOnThisFileSystem() throws Exception {
    officialSdkUploadsMatch(work);
  }

  @Test
  @DisplayName("E2B's SDK's upload of a context on tmpfs (another folder size) matches its hash")
  void officialSdkOnTmpfs() throws Exception {
    Path shm = Path.of("/dev/shm");
    assumeThat(Files.isDirectory(shm) && Files.isWritable(shm)).as("a tmpfs at /dev/shm").isTrue();
    Path root = Files.createTempDirectory(shm, "copy-archive-test-");
    try {
      officialSdkUploadsMatch(root);
    } finally {
      try (java.util.stream.Stream<Path> tree = Files.walk(root)) {
        for (Path p : tree.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  @DisplayName("this project's SDK declares folder sizes: its upload matches exactly, on any file system")
  void javaSdkDeclaresSizes() throws Exception {
    Path ctx = context(work);
    Path archive = TemplateFilesForTests.pack(ctx, ".");
    try (TarArchiveInputStream in = new TarArchiveInputStream(new java.util.zip.GZIPInputStream(Files.newInputStream(archive)))) {
      TarArchiveEntry first = in.getNextEntry();
      assertThat(first.getName()).isEqualTo("./");
      assertThat(first.getExtraPaxHeader(FilesHash.DECLARED_SIZE)).isEqualTo(Long.toString(Files.size(ctx)));
    }
    String hash = TemplateFilesForTests.hash(ctx, ".", "/all/");
    assertThat(repack(archive, step(".", "/all/", hash), 64, true)).isNotEmpty();
    // a declared size that is not the folder's gives another hash: the declaration is part of what is checked
    assertThatThrownBy(() -> repack(archive, step(".", "/all", hash), 64, true)).isInstanceOf(CopyArchive.Mismatch.class);
  }

  /** The SDK's hash of files given as name, content pairs (mode 0644, no folders). */
  private static String filesHash(String src, String dest, String... namesAndContents) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update(("COPY " + src + " " + dest).getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < namesAndContents.length; i += 2) {
      byte[] data = namesAndContents[i + 1].getBytes(StandardCharsets.UTF_8);
      sha.update(namesAndContents[i].getBytes(StandardCharsets.UTF_8));
      sha.update(Integer.toString(0100644).getBytes(StandardCharsets.UTF_8));
      sha.update(Integer.toString(data.length).getBytes(StandardCharsets.UTF_8));
      sha.update(data);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private Path tar(TarWriter w) throws IOException {
    Path out = Files.createTempFile(work, "crafted-", ".tar.gz");
    try (OutputStream file = Files.newOutputStream(out);
        TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(file, 64 * 1024), "UTF-8")) {
      tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
      tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
      w.write(tar);
    }
    return out;
  }

  private interface TarWriter {
    void write(TarArchiveOutputStream tar) throws IOException;
  }

  private static void file(TarArchiveOutputStream tar, String name, String content) throws IOException {
    byte[] data = content.getBytes(StandardCharsets.UTF_8);
    TarArchiveEntry e = new TarArchiveEntry(name);
    e.setSize(data.length);
    e.setMode(0644);
    tar.putArchiveEntry(e);
    tar.write(data);
    tar.closeArchiveEntry();
  }

  @Test
  @DisplayName("an upload whose content is not what its hash says is refused")
  void contentNotItsHash() throws Exception {
    Path archive = tar(t -> file(t, "a.txt", "what was uploaded"));
    String claimed = filesHash("a.txt", "/opt/a.txt", "a.txt", "what the hash was made of");
    assertThatThrownBy(() -> repack(archive, step("a.txt", "/opt/a.txt", claimed), 64, true)).isInstanceOf(CopyArchive.Mismatch.class)
        .hasMessageContaining("are not what it says");
    assertThat(repack(archive, step("a.txt", "/opt/a.txt", filesHash("a.txt", "/opt/a.txt", "a.txt", "what was uploaded")), 64, true))
        .containsExactly("/opt/a.txt");
  }

  @Test
  @DisplayName("a hard link (node-tar writes one for a second name of a file) hashes as the file it names, and is copied as a link")
  void hardLink() throws Exception {
    Path archive = tar(t -> {
      file(t, "a.txt", "shared");
      TarArchiveEntry l = new TarArchiveEntry("b.txt", TarConstants.LF_LINK);
      l.setLinkName("a.txt");
      l.setMode(0644);
      t.putArchiveEntry(l);
      t.closeArchiveEntry();
    });
    Path out = work.resolve("linked.tar");
    CopyArchive.repack(step(".", "/opt/", filesHash(".", "/opt/", "a.txt", "shared", "b.txt", "shared")), archive, out,
        new BuildBudget(64), true);
    try (TarArchiveInputStream in = new TarArchiveInputStream(Files.newInputStream(out))) {
      assertThat(in.getNextEntry().getName()).isEqualTo(".sandboxes-copy/opt/a.txt");
      TarArchiveEntry b = in.getNextEntry();
      assertThat(b.isLink()).isTrue();
      assertThat(b.getLinkName()).isEqualTo(".sandboxes-copy/opt/a.txt");
    }
  }

  @Test
  @Timeout(120) // compressing the bomb's 512 MiB (the default level: the fastest makes it 2.3 MB) took 31 s in a loaded run
  @DisplayName("a gzip bomb (512 MiB of zeros in a 0.5 MiB upload) stops at the build's budget, having written no more than it")
  void gzipBomb() throws Exception {
    Path archive = tar(t -> {
      TarArchiveEntry e = new TarArchiveEntry("zeros.bin");
      e.setSize(512 * MIB);
      e.setMode(0644);
      t.putArchiveEntry(e);
      byte[] zeros = new byte[(int) MIB];
      for (int i = 0; i < 512; i++) {
        t.write(zeros);
      }
      t.closeArchiveEntry();
    });
    assertThat(Files.size(archive)).isLessThan(MIB);
    Path out = work.resolve("bomb.tar");
    BuildBudget budget = new BuildBudget(16);
    assertThatThrownBy(() -> CopyArchive.repack(step(".", "/opt/", "0".repeat(64)), archive, out, budget, false))
        .isInstanceOf(SafeTar.TooLarge.class);
    assertThat(Files.size(out)).isLessThanOrEqualTo(16 * MIB + 64 * 1024);
    // and with a hash to check, it stops there too, before any hash is compared
    assertThatThrownBy(() -> repack(archive, step(".", "/opt/", "0".repeat(64)), 16, true)).isInstanceOf(SafeTar.TooLarge.class);
  }

  @Test
  @Timeout(60)
  @DisplayName("a build's budget spans its steps: two COPYs of 10 MiB fit 24 MiB, a third does not")
  void budgetAcrossSteps() throws Exception {
    Path archive = tar(t -> {
      TarArchiveEntry e = new TarArchiveEntry("ten.bin");
      e.setSize(10 * MIB);
      t.putArchiveEntry(e);
      t.write(new byte[(int) (10 * MIB)]);
      t.closeArchiveEntry();
    });
    BuildBudget budget = new BuildBudget(24);
    CopyArchive.repack(step(".", "/a/", "0".repeat(64)), archive, work.resolve("1.tar"), budget, false);
    CopyArchive.repack(step(".", "/b/", "0".repeat(64)), archive, work.resolve("2.tar"), budget, false);
    assertThatThrownBy(() -> CopyArchive.repack(step(".", "/c/", "0".repeat(64)), archive, work.resolve("3.tar"), budget, false))
        .isInstanceOf(SafeTar.TooLarge.class);
  }

  @Test
  @Timeout(60)
  @DisplayName("many empty files: past one per 16 KiB of budget, the build stops")
  void tooManyEntries() throws Exception {
    Path archive = tar(t -> {
      for (int i = 0; i < 2_000; i++) {
        file(t, "f" + i, "");
      }
    });
    assertThatThrownBy(() -> repack(archive, step(".", "/opt/", "0".repeat(64)), 16, false)).isInstanceOf(SafeTar.TooLarge.class);
    assertThat(repack(archive, step(".", "/opt/", "0".repeat(64)), 64, false)).hasSize(2_000);
  }

  // ---- names: crafted by hand, since commons-compress's writer takes quadratic time on a long name ----

  private static byte[] header(String name, char type, long size) {
    return io.sandboxes.local.TarHeaders.header(name, type, size);
  }

  /** Writes one entry whose content is {@code size} bytes of {@code fill} then {@code tail}. */
  private static void entry(OutputStream out, String name, char type, long size, byte fill, byte[] tail) throws IOException {
    out.write(header(name, type, size));
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, fill);
    long body = size - tail.length;
    while (body > 0) {
      int n = (int) Math.min(chunk.length, body);
      out.write(chunk, 0, n);
      body -= n;
    }
    out.write(tail);
    out.write(new byte[(int) ((512 - size % 512) % 512)]);
  }

  /** A gzipped tar whose one file "short" has a name of {@code length} bytes, given as a PAX record or a GNU long name. */
  private Path longName(long length, boolean pax) throws IOException {
    Path out = Files.createTempFile(work, "long-", ".tar.gz");
    // the fastest compression: a 256 MiB run of one byte takes seconds at the default level on a loaded machine
    try (OutputStream file = Files.newOutputStream(out); OutputStream gz = new GZIPOutputStream(file, 64 * 1024) {
      {
        def.setLevel(java.util.zip.Deflater.BEST_SPEED);
      }
    }) {
      if (pax) {
        String prefix = " path=";
        long recLen = prefix.length() + length + 1;
        long total = recLen + Long.toString(recLen).length();
        if (Long.toString(total).length() != Long.toString(recLen).length()) {
          total++;
        }
        byte[] head = (total + prefix).getBytes(StandardCharsets.US_ASCII);
        gz.write(header("PaxHeaders/x", 'x', total));
        gz.write(head);
        writeRun(gz, length, (byte) 'a');
        gz.write('\n');
        gz.write(new byte[(int) ((512 - total % 512) % 512)]);
      } else {
        entry(gz, "././@LongLink", 'L', length + 1, (byte) 'a', new byte[] {0});
      }
      entry(gz, "short", '0', 2, (byte) 'h', "hi".getBytes(StandardCharsets.US_ASCII));
      gz.write(new byte[1024]);
    }
    return out;
  }

  private static void writeRun(OutputStream out, long n, byte fill) throws IOException {
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, fill);
    while (n > 0) {
      int k = (int) Math.min(chunk.length, n);
      out.write(chunk, 0, k);
      n -= k;
    }
  }

  @Test
  @Timeout(120) // the archives' making, on a loaded machine; each refusal is bound at 5 s below
  @DisplayName("entry names of 64 KiB, 10 MiB and 256 MiB (PAX and GNU) are refused at once, none read into memory past 256 KiB")
  void longNames() throws Exception {
    for (boolean pax : new boolean[] {true, false}) {
      for (long length : new long[] {64 * 1024, 10 * MIB, 256 * MIB}) {
        Path archive = longName(length, pax);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> repack(archive, step(".", "/opt/", "0".repeat(64)), 1024, true)).as("%s name of %d bytes",
            pax ? "PAX" : "GNU", length).isInstanceOf(SafeTar.Refused.class).hasMessageContaining("4096 bytes");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
      }
    }
    // a name just under the cap passes
    Path ok = tar(t -> file(t, "d/" + "n".repeat(4000), "x"));
    assertThat(repack(ok, step(".", "/o/", "0".repeat(64)), 16, false)).containsExactly("/o/d");
  }

  @Test
  @Timeout(120) // the archives' making, on a loaded machine: what is read is bound by the bytes counted
  @DisplayName("a 256 MiB name is refused having read at most 256 KiB of it: it never reaches the server's heap")
  void longNameNotRead() throws Exception {
    for (boolean pax : new boolean[] {true, false}) {
      Path archive = longName(256 * MIB, pax);
      try (SafeTar.Reader in = SafeTar.open(archive, Long.MAX_VALUE)) {
        assertThatThrownBy(in::getNextEntry).isInstanceOf(SafeTar.Refused.class);
        assertThat(in.expanded()).as("bytes read").isLessThanOrEqualTo(SafeTar.MAX_HEADER_BYTES + 128 * 1024);
      }
    }
  }

  @Test
  @Timeout(60)
  @DisplayName("500 names of 4000 bytes, runs of slashes: read and re-packed in linear time, not a regex's or a writer's quadratic one")
  void longNamesCostLinearTime() throws Exception {
    Path archive = Files.createTempFile(work, "slashes-", ".tar.gz");
    try (OutputStream gz = new GZIPOutputStream(Files.newOutputStream(archive))) {
      for (int i = 0; i < 500; i++) {
        byte[] pax = CopyArchive.paxRecords(java.util.Map.of("path", "a" + "/".repeat(3990) + "b" + i));
        gz.write(header("PaxHeaders/x", 'x', pax.length));
        gz.write(pax);
        gz.write(new byte[(512 - pax.length % 512) % 512]);
        entry(gz, "short", '0', 1, (byte) 'x', new byte[0]);
      }
      gz.write(new byte[1024]);
    }
    long t0 = System.nanoTime();
    assertThat(repack(archive, step(".", "/o" + "/".repeat(4000), "0".repeat(64)), 16, false)).containsExactly("/o/a");
    // a second or two; 7.5 s once on a loaded CI machine. A quadratic reader of these names takes minutes
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  @DisplayName("a link target longer than 4096 bytes, and a sparse file, are refused")
  void linkTargetAndSparse() throws Exception {
    Path link = tar(t -> {
      TarArchiveEntry e = new TarArchiveEntry("l", TarConstants.LF_SYMLINK);
      e.setLinkName("t".repeat(5000));
      t.putArchiveEntry(e);
      t.closeArchiveEntry();
    });
    assertThatThrownBy(() -> repack(link, step(".", "/o/", "0".repeat(64)), 16, false)).isInstanceOf(SafeTar.Refused.class)
        .hasMessageContaining("link target");
    Path sparse = Files.createTempFile(work, "sparse-", ".tar");
    try (OutputStream out = Files.newOutputStream(sparse)) {
      entry(out, "s", 'S', 0, (byte) 0, new byte[0]);
      out.write(new byte[1024]);
    }
    assertThatThrownBy(() -> repack(sparse, step(".", "/o/", "0".repeat(64)), 16, false))
        .isInstanceOf(StepFailed.class).hasMessageContaining("sparse");
  }

  @Test
  @DisplayName("an archive that is not a tar is an error, not a hang")
  void notATar() throws Exception {
    Path junk = Files.createTempFile(work, "junk-", ".tar.gz");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(junk))) {
      out.write("not a tar at all".repeat(100).getBytes(StandardCharsets.UTF_8));
    }
    assertThatThrownBy(() -> repack(junk, step(".", "/o/", "0".repeat(64)), 16, true)).isInstanceOf(IOException.class);
  }
}
