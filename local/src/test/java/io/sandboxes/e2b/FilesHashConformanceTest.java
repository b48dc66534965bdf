package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java builder's COPY files hash is the official SDK's (the e2b npm package pinned in
 * {@code src/test/node/package.json}, its {@code Template.toJSON} computing the hashes), so a
 * folder uploaded by one is found present by the other. Node and npm are required.
 */
class FilesHashConformanceTest {

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the files hash of a folder, a file and the whole context equals the official JS SDK's")
  void sameHashAsTheOfficialSdk(@TempDir Path ctx) throws Exception {
    Files.createDirectories(ctx.resolve("app/nested/deep"));
    Files.writeString(ctx.resolve("app/run.sh"), "#!/bin/sh\necho hi\n");
    Files.setPosixFilePermissions(ctx.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
    Files.writeString(ctx.resolve("app/nested/deep/naïve data.txt"), "deep data\n");
    Files.createSymbolicLink(ctx.resolve("app/inner-link"), Path.of("nested/deep/naïve data.txt"));
    Files.createSymbolicLink(ctx.resolve("app/host-link"), Path.of("/etc/hostname"));
    Files.writeString(ctx.resolve("settings.conf"), "mode=test\n");

    Path work = Path.of("target", "node-hash").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json")) {
      Files.copy(Path.of("src", "test", "node", f), work.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Files.writeString(work.resolve("hash.mjs"), String.join("\n",
        "import { Template } from 'e2b'",
        "const t = Template({ fileContextPath: process.env.CONTEXT })",
        "  .fromTemplate('base').copy('app', '/opt/app').copy('settings.conf', '/etc/demo/').copy('.', '/all')",
        "for (const s of JSON.parse(await Template.toJSON(t, true)).steps) console.log(`${s.args[0]} ${s.filesHash}`)",
        ""));
    assertThat(run(work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")).startsWith("exit 0");
    String out = run(work, Map.of("CONTEXT", ctx.toString()), "node", "hash.mjs");
    assertThat(out).startsWith("exit 0");

    Map<String, String> sdk = new LinkedHashMap<>();
    out.lines().skip(1).map(l -> l.split(" ", 2)).filter(p -> p.length == 2).forEach(p -> sdk.put(p[0], p[1]));
    Map<String, String> java = new LinkedHashMap<>();
    for (String[] c : List.of(new String[] {"app", "/opt/app"}, new String[] {"settings.conf", "/etc/demo/"},
        new String[] {".", "/all"})) {
      java.put(c[0], TemplateFiles.hash(c[0], c[1], TemplateFiles.collect(ctx, c[0])));
    }
    assertThat(java).as("the official SDK printed:\n%s", out).isEqualTo(sdk);
  }

  /** @return {@code exit <code>} and then the process's output */
  private static String run(Path dir, Map<String, String> env, String... cmd) throws Exception {
    Path log = Files.createTempFile("node-hash-", ".log");
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(6, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        return "timeout\n" + Files.readString(log, StandardCharsets.UTF_8);
      }
      return "exit " + p.exitValue() + "\n" + Files.readString(log, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
