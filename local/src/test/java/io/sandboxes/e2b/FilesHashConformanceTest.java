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

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("with fileIgnorePatterns, the context's .dockerignore and glob sources, the files hash equals the official JS SDK's")
  void ignoredFilesAndGlobsHashAsTheOfficialSdk(@TempDir Path ctx) throws Exception {
    Files.createDirectories(ctx.resolve("app/cache/deep"));
    Files.createDirectories(ctx.resolve("app/tmp/inner"));
    Files.createDirectories(ctx.resolve("src/.hidden"));
    Files.writeString(ctx.resolve("app/main.txt"), "main\n");
    Files.writeString(ctx.resolve("app/debug.log"), "log\n");
    Files.writeString(ctx.resolve("app/cache/deep/blob.txt"), "cached\n");
    Files.writeString(ctx.resolve("app/tmp/inner/kept.txt"), "under a folder ignored without /**\n");
    Files.writeString(ctx.resolve("app/secret.txt"), "dockerignored\n");
    Files.writeString(ctx.resolve("src/a.py"), "a\n");
    Files.writeString(ctx.resolve("src/b.py"), "b\n");
    Files.writeString(ctx.resolve("src/c.py"), "c\n");
    Files.writeString(ctx.resolve("src/.hidden/d.py"), "d\n");
    Files.writeString(ctx.resolve("one.conf"), "1\n");
    Files.writeString(ctx.resolve("two.conf"), "2\n");
    Files.writeString(ctx.resolve(".dockerignore"), "# a comment\n\n  **/secret.txt  \n");
    List<String> patterns = List.of("**/*.log", "app/cache/**", "app/tmp");
    List<String[]> copies = List.of(new String[] {"app", "/opt/app"}, new String[] {"*.conf", "/etc/demo/"},
        new String[] {"app/**/*.txt", "/txt/"}, new String[] {"src/{a,b}.py", "/py/"}, new String[] {"src/**", "/src"},
        new String[] {"src/[!ab].py", "/c/"}, new String[] {".", "/all"});

    // its own folder: the other test may run npm at the same time
    Path work = Path.of("target", "node-hash-ignore").toAbsolutePath();
    Files.createDirectories(work);
    for (String f : List.of("package.json", "package-lock.json")) {
      Files.copy(Path.of("src", "test", "node", f), work.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    StringBuilder steps = new StringBuilder();
    for (String[] c : copies) {
      steps.append(".copy('").append(c[0]).append("', '").append(c[1]).append("')");
    }
    Files.writeString(work.resolve("ignore.mjs"), String.join("\n",
        "import { Template } from 'e2b'",
        "const t = Template({ fileContextPath: process.env.CONTEXT, fileIgnorePatterns: " + patterns.stream()
            .map(p -> "'" + p + "'").toList() + " })",
        "  .fromTemplate('base')" + steps,
        "for (const s of JSON.parse(await Template.toJSON(t, true)).steps) console.log(`${s.args[0]} ${s.filesHash}`)",
        ""));
    assertThat(run(work, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")).startsWith("exit 0");
    String out = run(work, Map.of("CONTEXT", ctx.toString()), "node", "ignore.mjs");
    assertThat(out).startsWith("exit 0");

    Map<String, String> sdk = new LinkedHashMap<>();
    out.lines().skip(1).map(l -> l.split(" ", 2)).filter(p -> p.length == 2).forEach(p -> sdk.put(p[0], p[1]));
    Map<String, String> java = new LinkedHashMap<>();
    List<CopyGlob> ignore = CopyGlob.ignorePatterns(patterns, ctx);
    for (String[] c : copies) {
      java.put(c[0], TemplateFiles.hash(c[0], c[1], TemplateFiles.collect(ctx, c[0], ignore)));
    }
    assertThat(java).as("the official SDK printed:\n%s", out).isEqualTo(sdk);
    assertThat(TemplateFiles.collect(ctx, "app", ignore)).extracting(TemplateFiles.Entry::relative)
        .as("what is left of app/").containsExactly("app", "app/main.txt", "app/tmp/inner", "app/tmp/inner/kept.txt");
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
