package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 21, class 6: the server checks every upload against the files hash it was stored under;
 * the official e2b JS SDK (pinned in {@code src/test/node/package.json}) uploads folders without
 * their sizes, which its hash includes. Its COPY of folders (one of 200 entries, nested, with
 * links and an executable) from a context on this machine's disk (ext4) and on tmpfs builds, and
 * the files are in the template's sandboxes. Node and npm are required.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OfficialSdkCopyTest {
  private NodeScripts node;

  @BeforeAll
  void install() throws Exception {
    node = NodeScripts.install("node-copy", "template-copy.mjs");
  }

  private static void context(Path ctx, String mark) throws Exception {
    Files.createDirectories(ctx.resolve("app/nested/deep"));
    Files.writeString(ctx.resolve("app/run.sh"), "#!/bin/sh\necho " + mark + "\n");
    Files.setPosixFilePermissions(ctx.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.writeString(ctx.resolve("app/nested/deep/data.txt"), "deep " + mark + "\n");
    Files.createSymbolicLink(ctx.resolve("app/link"), Path.of("nested/deep/data.txt"));
    Path many = Files.createDirectories(ctx.resolve("app/many"));
    for (int i = 0; i < 200; i++) {
      Files.writeString(many.resolve("file-with-a-longish-name-" + i + ".txt"), "n" + i);
    }
    Files.writeString(ctx.resolve("top.conf"), "top " + mark + "\n");
  }

  private void buildsFrom(Path root, LocalServer server, E2BApi e2b) throws Exception {
    String mark = UUID.randomUUID().toString();
    Path ctx = Files.createDirectories(root.resolve("ctx"));
    context(ctx, mark);
    String name = TemplateBuildTest.unique("tpl-sdk-copy");
    String out = node.run(NodeScripts.env(server, "CONTEXT", ctx.toString(), "TEMPLATE_NAME", name), Duration.ofMinutes(8),
        "node", "template-copy.mjs");
    try {
      assertThat(out).as("the SDK printed:\n%s", out).startsWith("exit 0").contains("built: " + name);
      try (LiveSandbox s = e2b.create(SandboxSpec.of(name))) {
        assertThat(s.exec("/opt/app/run.sh; cat /opt/app/link /opt/all/top.conf; ls /opt/app/many | wc -l").stdout())
            .isEqualTo(mark + "\ndeep " + mark + "\ntop " + mark + "\n200\n");
      }
    } finally {
      TemplateBuildTest.call(server, "DELETE", "/templates/" + name, null);
    }
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the official SDK's COPY of folders from a context on this machine's disk is accepted and built")
  void fromTheDisk(LocalServer server, E2BApi e2b, @org.junit.jupiter.api.io.TempDir Path root) throws Exception {
    buildsFrom(root, server, e2b);
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the official SDK's COPY of folders from a context on tmpfs (other folder sizes) is accepted and built")
  void fromTmpfs(LocalServer server, E2BApi e2b) throws Exception {
    Path shm = Path.of("/dev/shm");
    assumeThat(Files.isDirectory(shm) && Files.isWritable(shm)).as("a tmpfs at /dev/shm").isTrue();
    Path root = Files.createTempDirectory(shm, "sdk-copy-");
    try {
      buildsFrom(root, server, e2b);
    } finally {
      try (var walk = Files.walk(root)) {
        for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }
}
