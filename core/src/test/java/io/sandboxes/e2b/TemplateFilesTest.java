package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A COPY's files on this machine: found without leaving the context, hashed by content, packed with links as links. */
class TemplateFilesTest {

  private static Path project(Path dir) throws Exception {
    Files.createDirectories(dir.resolve("app/nested"));
    Files.writeString(dir.resolve("app/run.sh"), "echo hi\n");
    Files.setPosixFilePermissions(dir.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.writeString(dir.resolve("app/nested/data.txt"), "data\n");
    Files.createSymbolicLink(dir.resolve("app/out-link"), Path.of("/etc/passwd"));
    return dir;
  }

  private static String hash(Path ctx, String src) {
    return TemplateFiles.hash(src, "/dest", TemplateFiles.collect(ctx, src));
  }

  @Test
  @DisplayName("the hash follows content, mode and link targets, and stays put when nothing changed")
  void hash(@TempDir Path dir) throws Exception {
    Path ctx = project(dir);
    String first = hash(ctx, "app");
    assertThat(first).matches("[0-9a-f]{64}").isEqualTo(hash(ctx, "app"));
    assertThat(TemplateFiles.hash("app", "/elsewhere", TemplateFiles.collect(ctx, "app"))).as("the destination counts").isNotEqualTo(first);
    Files.writeString(ctx.resolve("app/nested/data.txt"), "date\n"); // same size, other bytes
    String content = hash(ctx, "app");
    assertThat(content).isNotEqualTo(first);
    Files.setPosixFilePermissions(ctx.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));
    String mode = hash(ctx, "app");
    assertThat(mode).isNotEqualTo(content);
    Files.delete(ctx.resolve("app/out-link"));
    Files.createSymbolicLink(ctx.resolve("app/out-link"), Path.of("/etc/shadow"));
    assertThat(hash(ctx, "app")).as("a link's target, not the file it names").isNotEqualTo(mode);
  }

  @Test
  @DisplayName("the tar names entries from the context, keeps modes, and stores links as links; the whole context has no root entry")
  void pack(@TempDir Path dir) throws Exception {
    Path ctx = project(dir);
    List<String> seen = new ArrayList<>();
    Path tar = TemplateFiles.pack(TemplateFiles.collect(ctx, "app"));
    try (InputStream raw = Files.newInputStream(tar); TarArchiveInputStream in = new TarArchiveInputStream(new GZIPInputStream(raw))) {
      TarArchiveEntry e;
      while ((e = in.getNextEntry()) != null) {
        seen.add(e.getName() + " " + Integer.toOctalString(e.getMode() & 07777) + (e.isSymbolicLink() ? " -> " + e.getLinkName() : ""));
      }
    } finally {
      Files.delete(tar);
    }
    assertThat(seen).contains("app/run.sh 750", "app/out-link 777 -> /etc/passwd").anyMatch(s -> s.startsWith("app/ "))
        .anyMatch(s -> s.startsWith("app/nested/ ")).anyMatch(s -> s.startsWith("app/nested/data.txt "));
    assertThat(TemplateFiles.collect(ctx, ".")).extracting(TemplateFiles.Entry::relative).contains("app", "app/nested/data.txt");
  }

  @Test
  @DisplayName("a source through a linked folder out of the context, or a missing one, is refused")
  void refusals(@TempDir Path dir) throws Exception {
    Path ctx = project(dir.resolve("ctx"));
    Files.createDirectories(dir.resolve("outside"));
    Files.writeString(dir.resolve("outside/secret.txt"), "secret");
    Files.createSymbolicLink(ctx.resolve("linked"), dir.resolve("outside"));
    assertThatThrownBy(() -> TemplateFiles.collect(ctx, "linked/secret.txt")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("through a symbolic link");
    assertThat(TemplateFiles.collect(ctx, "linked")).as("the link itself is copied as a link").singleElement()
        .satisfies(e -> assertThat(e.kind()).isEqualTo(TemplateFiles.Kind.LINK));
    assertThatThrownBy(() -> TemplateFiles.collect(ctx, "missing")).hasMessageContaining("'missing' not found");
    assertThatThrownBy(() -> TemplateFiles.collect(ctx.resolve("nope"), "app")).hasMessageContaining("context directory");
  }
}
