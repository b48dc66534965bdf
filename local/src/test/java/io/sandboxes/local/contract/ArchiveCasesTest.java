package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Behaviour contract, sections H (importFiles) and I (exportFiles), with real tar in a real sandbox. */
class ArchiveCasesTest extends OneSandboxCases {
  @Override
  String project() {
    return "archive-cases";
  }
  private static final int MIB = 1024 * 1024;




  private List<String> commandsSince(long mark) {
    return h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> r.atNanos() >= mark)
        .map(Wire::command).filter(c -> !c.startsWith("kill -0")).toList();
  }

  private List<Integer> pieceWritesSince(long mark) {
    return h.envd.requests("POST", "/files").stream().filter(r -> r.atNanos() >= mark && r.query().contains(".piece"))
        .map(r -> r.body().length).toList();
  }

  private static Predicate<FaultServer.Recorded> startOf(String prefix) {
    return r -> r.path().equals("/process.Process/Start") && Wire.command(r).startsWith(prefix);
  }

  /** A process stream that exits with a code and stderr, as the daemon would report a failed step. */
  private static FaultServer.Fault failing(int code, String stderr) {
    String err = java.util.Base64.getEncoder().encodeToString(stderr.getBytes(StandardCharsets.UTF_8));
    return FaultServer.stream(FaultServer.Step.send(0, "{\"event\":{\"start\":{\"pid\":4242}}}"),
        FaultServer.Step.send(0, "{\"event\":{\"data\":{\"stderr\":\"" + err + "\"}}}"),
        FaultServer.Step.send(0, "{\"event\":{\"end\":{\"exitCode\":" + code + ",\"exited\":true,\"status\":\"exit status " + code + "\"}}}"),
        FaultServer.Step.end(0, "{}"));
  }

  static byte[] tar(String... namesAndContents) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
      for (int i = 0; i < namesAndContents.length; i += 2) {
        byte[] data = namesAndContents[i + 1].getBytes(StandardCharsets.UTF_8);
        TarArchiveEntry e = new TarArchiveEntry(namesAndContents[i]);
        e.setSize(data.length);
        e.setMode(06755);
        e.setIds(0, 0);
        out.putArchiveEntry(e);
        out.write(data);
        out.closeArchiveEntry();
      }
    }
    return bytes.toByteArray();
  }

  /** A stream that yields the given chunks as separate reads, like an archive arriving in parts. */
  static InputStream chunks(int count, int size) {
    List<InputStream> parts = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] part = new byte[size];
      java.util.Arrays.fill(part, (byte) 'x');
      parts.add(new ByteArrayInputStream(part));
    }
    return new SequenceInputStream(Collections.enumeration(parts));
  }

  @Test
  @DisplayName("case 88, case 89, case 92, case 96: a small archive is spooled in one piece, extracted with ownership and mode bits dropped, and cleaned up last")
  void smallImport() throws Exception {
    long mark = System.nanoTime();
    sandbox.importFiles("/home/user/imported", new ByteArrayInputStream(tar("app/run.sh", "echo hi\n", "app/data.txt", "42")));
    List<String> cmds = commandsSince(mark);
    assertThat(sandbox.readFile("/home/user/imported/app/data.txt")).isEqualTo("42");
    assertThat(sandbox.exec("find /home/user/imported/app/run.sh -printf '%u %m\\n'").stdout()).isEqualTo("user 755\n");
    assertThat(cmds.get(0)).matches("cat /tmp/mol-import-[0-9a-z]+-[0-9a-z]{6}\\.tar\\.piece > /tmp/mol-import-[0-9a-z]+-[0-9a-z]{6}\\.tar && rm -f .*");
    String tarPath = cmds.get(0).split(" ")[3];
    assertThat(cmds.get(1)).isEqualTo("mkdir -p '/home/user/imported' && tar xf " + tarPath
        + " -C '/home/user/imported' --no-same-owner --no-same-permissions");
    assertThat(cmds.get(cmds.size() - 1)).isEqualTo("rm -f " + tarPath + " " + tarPath + ".piece");
    assertThat(pieceWritesSince(mark)).hasSize(1);
    assertThat(h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> r.atNanos() >= mark
        && Wire.command(r).startsWith("mkdir -p")).findFirst().orElseThrow().headers().get("connect-timeout-ms")).isEqualTo("300000");
    long again = System.nanoTime();
    sandbox.importFiles("/home/user/imported2", new ByteArrayInputStream(tar("x", "y")));
    assertThat(commandsSince(again).get(0).split(" ")[3]).isNotEqualTo(tarPath);
  }

  @Test
  @DisplayName("case 90, case 91: large archives go in 8 MiB pieces, whatever the chunks they arrive in")
  void pieces() {
    long mark = System.nanoTime();
    assertThatThrownBy(() -> sandbox.importFiles("/home/user/big", chunks(6, 3 * MIB))).hasMessageContaining("tar extract failed");
    assertThat(pieceWritesSince(mark)).containsExactly(8 * MIB, 8 * MIB, 2 * MIB);
    List<String> cmds = commandsSince(mark);
    assertThat(cmds.get(0)).contains(".piece > ");
    assertThat(cmds.get(1)).contains(".piece >> ");
    assertThat(cmds.get(2)).contains(".piece >> ");
    assertThat(cmds.stream().filter(c -> c.contains("tar xf"))).hasSize(1);
    long second = System.nanoTime();
    assertThatThrownBy(() -> sandbox.importFiles("/home/user/big", chunks(1, 20 * MIB))).hasMessageContaining("tar extract failed");
    assertThat(pieceWritesSince(second)).containsExactly(8 * MIB, 8 * MIB, 4 * MIB);
  }

  @Test
  @DisplayName("case 93: an empty archive creates an empty tar, still extracts, and still cleans up last")
  void emptyImport() {
    long mark = System.nanoTime();
    try {
      sandbox.importFiles("/home/user/empty-import", new ByteArrayInputStream(new byte[0]));
    } catch (SandboxException bad) {
      assertThat(bad).hasMessageContaining("tar extract failed");
    }
    List<String> cmds = commandsSince(mark);
    assertThat(cmds.get(0)).matches(": > /tmp/mol-import-.*\\.tar");
    assertThat(cmds.get(1)).contains("tar xf");
    assertThat(cmds.get(cmds.size() - 1)).startsWith("rm -f /tmp/mol-import-");
    assertThat(h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> r.atNanos() >= mark && Wire.command(r).startsWith(": >"))
        .findFirst().orElseThrow().headers().get("connect-timeout-ms")).isEqualTo("30000");
  }

  @Test
  @DisplayName("case 94, case 95, case 96: each failing step is named with its exit code and at most 300 characters of stderr, and cleanup still runs last")
  void failingSteps() {
    String longErr = "x".repeat(1000);
    h.envd.on(startOf("cat /tmp/mol-import-"), failing(1, longErr));
    try {
      long mark = System.nanoTime();
      assertThatThrownBy(() -> sandbox.importFiles("/home/user/f", new ByteArrayInputStream(new byte[] {1, 2})))
          .hasMessage("importFiles: spooling the archive failed (1): " + "x".repeat(300));
      List<String> cmds = commandsSince(mark);
      assertThat(cmds.get(cmds.size() - 1)).startsWith("rm -f /tmp/mol-import-");
    } finally {
      h.envd.clearFaults();
    }
    assertThatThrownBy(() -> sandbox.importFiles("/home/user/f", new ByteArrayInputStream("not a tar at all, really".repeat(40)
        .getBytes(StandardCharsets.UTF_8))))
        .hasMessageStartingWith("importFiles: tar extract failed (2): tar: This does not look like a tar archive");
    h.envd.on(startOf(": > "), failing(1, "bash: /tmp/x: No space left on device"));
    try {
      assertThatThrownBy(() -> sandbox.importFiles("/home/user/f", new ByteArrayInputStream(new byte[0])))
          .hasMessage("importFiles: creating the empty archive failed (1): bash: /tmp/x: No space left on device");
    } finally {
      h.envd.clearFaults();
    }
  }

  @Test
  @DisplayName("case 96, case 97: an infrastructure failure passes through unchanged, and the cleanup failing too never masks it")
  void infrastructureFailure() {
    h.envd.on(startOf("mkdir -p"), FaultServer.stream(FaultServer.Step.end(0,
        "{\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"deadline exceeded\"}}")));
    h.envd.on(startOf("rm -f /tmp/mol-import-"), FaultServer.json(503, "{\"code\":\"unavailable\",\"message\":\"cleanup refused\"}"));
    try {
      assertThatThrownBy(() -> sandbox.importFiles("/home/user/f", new ByteArrayInputStream(new byte[] {1})))
          .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("deadline_exceeded"));
    } finally {
      h.envd.clearFaults();
    }
  }

  @Test
  @DisplayName("case 98, case 99, case 101, case 102, case 104: export is rooted at the last segment, quotes paths, names its spool uniquely, reads exact bytes, and cleans up")
  void export() throws Exception {
    sandbox.exec("mkdir -p \"/home/user/it's odd/sub\" /home/user/my-app/src && echo a > /home/user/my-app/src/a.txt"
        + " && echo b > \"/home/user/it's odd/sub/b.txt\"").orThrow();
    long mark = System.nanoTime();
    List<String> names = entries(sandbox.exportFiles("/home/user/my-app"));
    assertThat(names).contains("my-app/", "my-app/src/", "my-app/src/a.txt").noneMatch(n -> n.startsWith("./"));
    List<String> cmds = commandsSince(mark);
    assertThat(cmds.get(0)).matches("tar cf /tmp/mol-export-[0-9a-z]+-[0-9a-z]{6}\\.tar -C '/home/user' 'my-app'");
    String tarPath = cmds.get(0).split(" ")[2];
    assertThat(h.envd.requests("GET", "/files")).anyMatch(r -> r.atNanos() >= mark && r.query().contains("mol-export"));
    assertThat(cmds.get(cmds.size() - 1)).isEqualTo("rm -f " + tarPath);
    long second = System.nanoTime();
    assertThat(entries(sandbox.exportFiles("/home/user/it's odd/"))).contains("it's odd/sub/b.txt");
    List<String> again = commandsSince(second);
    assertThat(again.get(0)).endsWith("-C '/home/user' 'it'\\''s odd'");
    assertThat(again.get(0).split(" ")[2]).isNotEqualTo(tarPath);
    long third = System.nanoTime();
    sandbox.exportFiles("/home/");
    assertThat(commandsSince(third).get(0)).endsWith("-C '/' 'home'");
  }

  @Test
  @DisplayName("case 100: the root and relative paths are refused before anything runs")
  void refusedPaths() {
    long mark = System.nanoTime();
    for (String bad : List.of("/", "workspace", "")) {
      assertThatThrownBy(() -> sandbox.exportFiles(bad)).hasMessageContaining("path must be an absolute directory below \"/\"");
    }
    assertThat(commandsSince(mark)).isEmpty();
  }

  @Test
  @DisplayName("case 103, case 104: a failing tar names the step and a failing read passes through; cleanup runs last either way")
  void exportFailures() {
    long mark = System.nanoTime();
    assertThatThrownBy(() -> sandbox.exportFiles("/home/user/no-such-app"))
        .hasMessageStartingWith("exportFiles: tar create failed (2): tar: no-such-app: Cannot stat");
    List<String> cmds = commandsSince(mark);
    assertThat(cmds.get(cmds.size() - 1)).startsWith("rm -f /tmp/mol-export-");
    assertThat(h.envd.requests("POST", "/process.Process/Start").stream().filter(r -> r.atNanos() >= mark
        && Wire.command(r).startsWith("rm -f")).findFirst().orElseThrow().headers().get("connect-timeout-ms")).isEqualTo("20000");
    sandbox.exec("mkdir -p /home/user/readfail").orThrow();
    h.envd.on(r -> r.method().equals("GET") && r.path().equals("/files") && r.query().contains("mol-export"),
        FaultServer.json(500, "{\"code\":500,\"message\":\"read failed\"}"));
    try {
      long second = System.nanoTime();
      assertThatThrownBy(() -> sandbox.exportFiles("/home/user/readfail")).hasMessageContaining("read failed");
      List<String> after = commandsSince(second);
      assertThat(after.get(after.size() - 1)).startsWith("rm -f /tmp/mol-export-");
    } finally {
      h.envd.clearFaults();
    }
  }

  @Test
  @DisplayName("a local project folder goes in with Tars.pack, its build runs, and the artefacts come back with Tars.unpack")
  void localFolders(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path project = java.nio.file.Files.createDirectories(dir.resolve("my-app"));
    java.nio.file.Files.writeString(project.resolve("build.sh"), "mkdir -p dist && echo built-$(whoami) > dist/out.txt\n");
    sandbox.importFiles("/home/user/projects", io.sandboxes.Tars.pack(project));
    assertThat(sandbox.exec("cd /home/user/projects/my-app && sh build.sh").exitCode()).isZero();
    List<java.nio.file.Path> written = io.sandboxes.Tars.unpack(sandbox.exportFiles("/home/user/projects/my-app/dist"), dir.resolve("out"));
    assertThat(written).contains(dir.resolve("out/dist/out.txt").toAbsolutePath());
    assertThat(java.nio.file.Files.readString(dir.resolve("out/dist/out.txt"))).isEqualTo("built-user\n");
  }

  private static List<String> entries(InputStream tar) throws IOException {
    List<String> names = new ArrayList<>();
    try (TarArchiveInputStream in = new TarArchiveInputStream(tar)) {
      TarArchiveEntry e;
      while ((e = in.getNextEntry()) != null) {
        names.add(e.getName());
      }
    }
    return names;
  }
}
