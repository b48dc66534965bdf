package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.BuildOptions;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.Template;
import io.sandboxes.template.TemplateBuildException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java SDK's template builder against the real local server and real Docker builds: log
 * streaming, COPY of a folder, modes and owners, ignored files and globs, the cache on a rebuild, a
 * failing step as a typed exception, a COPY source outside the context refused before any request, a sandbox from the
 * alias, and a delete refused while that sandbox lives.
 */
@ExtendWith(SharedServer.class)
class TemplateBuilderTest {

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static List<String> messages(List<BuildLogEntry> log) {
    return log.stream().map(BuildLogEntry::message).toList();
  }

  /** A project folder: app/ with a script, nested files and links, and a config file beside it. */
  private static Path project(Path dir) throws Exception {
    Path app = Files.createDirectories(dir.resolve("app/nested/deep"));
    Files.writeString(dir.resolve("app/run.sh"), "#!/bin/sh\necho \"script says $GREETING from $(pwd)\"\n");
    Files.setPosixFilePermissions(dir.resolve("app/run.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(dir.resolve("app/nested/deep/data.txt"), "deep data\n");
    Files.setPosixFilePermissions(dir.resolve("app/nested/deep/data.txt"), PosixFilePermissions.fromString("rw-r--r--"));
    Files.createSymbolicLink(dir.resolve("app/inner-link"), Path.of("nested/deep/data.txt"));
    // a link out of the context is copied as a link: in the sandbox it names the sandbox's own file
    Files.createSymbolicLink(dir.resolve("app/host-link"), Path.of("/etc/hostname"));
    Files.writeString(dir.resolve("settings.conf"), "mode=test\n");
    Files.writeString(dir.resolve("not-copied.txt"), "stays home\n");
    return app;
  }

  @Test
  @DisplayName("a template with COPY of a folder and of a file with a mode, ENV, WORKDIR, RUN and a start command: the log streams the"
      + " RUN's lines, a sandbox from the alias has the files, env and workdir, a delete is refused while it lives, an unchanged rebuild"
      + " is all cached")
  void buildUseRebuildDelete(E2BApi e2b, @TempDir Path dir) throws Exception {
    project(dir);
    String name = unique("jtpl");
    String mark = UUID.randomUUID().toString(); // no earlier run's cache applies to this build
    Template t = Template.fromTemplate("base")
        .withContextDir(dir)
        .setEnvs(Map.of("GREETING", "hello from the template", "RUN_MARK", mark))
        .copy("app", "/opt/app")
        .copy("settings.conf", "/etc/demo/", CopyOptions.defaults().withUser("root").withMode(0640))
        .setWorkdir("/opt/app")
        .runCmd(List.of("echo run-step-output-$RUN_MARK", "cat nested/deep/data.txt", "id -un > who.txt", "echo to-stderr >&2"))
        .runCmd("echo root-step-as-$(id -un) > root.txt", "root")
        .setStartCmd("sleep 1; echo started > /tmp/started; exec sleep 600", "test -f /tmp/started");
    List<BuildLogEntry> log = new CopyOnWriteArrayList<>();
    long t0 = System.nanoTime();
    BuildInfo built = e2b.buildTemplate(t, name, BuildOptions.defaults().onLog(log::add));
    long firstMs = (System.nanoTime() - t0) / 1_000_000;
    try {
      assertThat(built.name()).isEqualTo(name);
      assertThat(built.templateId()).isNotBlank();
      assertThat(messages(log)).as("the RUN's output, streamed as E2B prints it").contains("[builder 5/6] [stdout]: run-step-output-" + mark,
          "[builder 5/6] [stdout]: deep data", "[builder 5/6] [stderr]: to-stderr");
      assertThat(log).anySatisfy(e -> {
        assertThat(e.message()).isEqualTo("[builder 5/6] [stdout]: run-step-output-" + mark);
        assertThat(e.step()).as("the fifth step").isEqualTo("5");
      });
      assertThat(messages(log)).contains("Uploaded 'app'");
      assertThat(e2b.templateExists(name)).isTrue();

      try (LiveSandbox s = e2b.create(SandboxSpec.of(name))) {
        // the start command sleeps before it writes: only a create that waited for the ready check sees it at once
        assertThat(s.readFile("/tmp/started")).isEqualTo("started\n");
        assertThat(s.exec("echo \"$GREETING|$RUN_MARK\"; pwd").stdout()).isEqualTo("hello from the template|" + mark + "\n/opt/app\n");
        assertThat(s.exec("./run.sh").stdout()).isEqualTo("script says hello from the template from /opt/app\n");
        assertThat(s.readFile("/opt/app/nested/deep/data.txt")).isEqualTo("deep data\n");
        assertThat(s.exec("stat -c '%a %U' /opt/app/run.sh /opt/app/nested/deep/data.txt /etc/demo/settings.conf").stdout())
            .as("modes kept, owners the user in effect; the file's own mode and owner")
            .isEqualTo("755 user\n644 user\n640 root\n");
        assertThat(s.exec("readlink /opt/app/inner-link; readlink /opt/app/host-link; cat /opt/app/inner-link").stdout())
            .as("links are links, never followed on the host").isEqualTo("nested/deep/data.txt\n/etc/hostname\ndeep data\n");
        assertThat(s.exec("test -e /opt/app/not-copied.txt || test -e /opt/not-copied.txt; echo $?").stdout()).isEqualTo("1\n");
        assertThat(s.readFile("/opt/app/who.txt")).isEqualTo("user\n");
        assertThat(s.readFile("/opt/app/root.txt")).as("an install-style RUN runs as root").isEqualTo("root-step-as-root\n");

        assertThatThrownBy(() -> e2b.deleteTemplate(name)).as("a template in use cannot be deleted")
            .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(409));

        // an unchanged rebuild: the uploads are present, every step is found in the cache
        List<BuildLogEntry> again = new CopyOnWriteArrayList<>();
        long t1 = System.nanoTime();
        BuildInfo rebuilt = e2b.buildTemplate(t, name, BuildOptions.defaults().onLog(again::add));
        System.err.printf("java template build: first %d ms, unchanged rebuild %d ms%n", firstMs, (System.nanoTime() - t1) / 1_000_000);
        assertThat(rebuilt.templateId()).as("a rebuild keeps the id").isEqualTo(built.templateId());
        assertThat(rebuilt.buildId()).isNotEqualTo(built.buildId());
        assertThat(messages(again)).contains("Skipping upload of 'app', already cached", "Skipping upload of 'settings.conf', already cached")
            .noneMatch(m -> m.contains("[stdout]"));
        assertThat(messages(again).stream().filter(m -> m.startsWith("CACHED [builder ")).count()).as("%s", messages(again))
            .as("COPY, COPY, WORKDIR, RUN, RUN").isEqualTo(5);
      }
    } finally {
      // the sandbox is gone once killed; a delete right after may still see it going
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> e2b.deleteTemplate(name) || true);
    }
    assertThat(e2b.templateExists(name)).isFalse();
  }

  @Test
  @DisplayName("the template's ignore patterns and the context's .dockerignore leave files out of a built COPY; several sources, one"
      + " a glob, land under one destination; minFreeDiskMb is served, and refused past the sandbox's disk before anything is built")
  void ignoredFilesGlobsAndFreeDisk(E2BApi e2b, @TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("app/node_modules/pkg"));
    Files.createDirectories(dir.resolve("src"));
    Files.writeString(dir.resolve("app/main.txt"), "main\n");
    Files.writeString(dir.resolve("app/debug.log"), "log\n");
    Files.writeString(dir.resolve("app/secret.txt"), "never sent\n");
    Files.writeString(dir.resolve("app/node_modules/pkg/index.js"), "dependency\n");
    for (String f : List.of("a", "b", "c")) {
      Files.writeString(dir.resolve("src/" + f + ".py"), f + "\n");
    }
    Files.writeString(dir.resolve(".dockerignore"), "# as E2B's SDK reads it\n**/secret.txt\n");
    String name = unique("jtpl-ignore");
    Template t = Template.fromTemplate("base").withContextDir(dir)
        .withFileIgnorePatterns(List.of("**/*.log", "app/node_modules/**"))
        .setEnvs(Map.of("RUN_MARK", UUID.randomUUID().toString()))
        .copy(List.of("app", "src/{a,b}.py"), "/opt/x/", CopyOptions.defaults());

    assertThatThrownBy(() -> e2b.buildTemplate(t, name, BuildOptions.defaults().withMinFreeDiskMb(100_000_000)))
        .as("more free disk than a sandbox has").isInstanceOfSatisfying(SandboxApiException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(400);
          assertThat(e).hasMessageContaining("minFreeDiskMb");
        });
    assertThat(e2b.templateExists(name)).as("nothing registered").isFalse();

    List<BuildLogEntry> log = new CopyOnWriteArrayList<>();
    e2b.buildTemplate(t, name, BuildOptions.defaults().withMinFreeDiskMb(64).onLog(log::add));
    try {
      assertThat(messages(log)).contains("Uploaded 'app'", "Uploaded 'src/{a,b}.py'");
      try (LiveSandbox s = e2b.create(SandboxSpec.of(name))) {
        assertThat(s.exec("cd /opt/x && find . -mindepth 1 | sort").stdout()).as("ignored files were never sent")
            .isEqualTo("./a.py\n./b.py\n./main.txt\n");
        assertThat(s.readFile("/opt/x/main.txt")).isEqualTo("main\n");
      }
    } finally {
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> e2b.deleteTemplate(name) || true);
    }
  }

  @Test
  @DisplayName("a failing RUN throws TemplateBuildException with the server's reason (the exit code), the step and the log; nothing"
      + " is registered")
  void failingStep(E2BApi e2b) {
    String name = unique("jtpl-fail");
    String mark = UUID.randomUUID().toString();
    Template t = Template.fromTemplate("base").runCmd("echo fine-" + mark).runCmd("echo before-the-failure-" + mark + "; exit 7")
        .runCmd("echo never-run-" + mark);
    List<BuildLogEntry> log = new CopyOnWriteArrayList<>();
    assertThatThrownBy(() -> e2b.buildTemplate(t, name, BuildOptions.defaults().onLog(log::add)))
        .isInstanceOfSatisfying(TemplateBuildException.class, e -> {
          assertThat(e.reason()).contains("exit code 7");
          assertThat(e.getMessage()).contains(name, "step 2", "exit code 7");
          assertThat(e.step()).isEqualTo("2");
          assertThat(e.templateId()).isNotBlank();
          assertThat(messages(e.logs())).contains("[builder 1/3] [stdout]: fine-" + mark, "[builder 2/3] [stdout]: before-the-failure-" + mark)
              .noneMatch(m -> m.contains("never-run-"));
        });
    assertThat(messages(log)).contains("[builder 2/3] [stdout]: before-the-failure-" + mark, "Build failed: step 2 failed with exit code 7");
    assertThat(e2b.templateExists(name)).isFalse();
  }

  @Test
  @DisplayName("a RUN as a user the image does not have fails with E2B's words for it, the step named; nothing is registered")
  void runAsUnknownUser(E2BApi e2b) {
    String name = unique("jtpl-user");
    Template t = Template.fromTemplate("base").skipCache().runCmd("whoami", "root123");
    assertThatThrownBy(() -> e2b.buildTemplate(t, name, BuildOptions.defaults()))
        .isInstanceOfSatisfying(TemplateBuildException.class, e -> {
          assertThat(e.reason()).isEqualTo("failed to run command 'whoami': command failed: unauthenticated: invalid username: 'root123'");
          assertThat(e.step()).isEqualTo("1");
        });
    assertThat(e2b.templateExists(name)).isFalse();
  }

  @Test
  @DisplayName("fromImage of a Debian suite not in the local Docker is built here from the Debian mirror (no registry), once; an unknown suite is a build error saying so")
  void fromDebianSuite(E2BApi e2b) {
    String name = unique("jtpl-debian");
    List<BuildLogEntry> log = new CopyOnWriteArrayList<>();
    Template t = Template.fromImage("debian:bookworm-slim").runCmd("cat /etc/debian_version > /etc/built-on");
    BuildInfo built = e2b.buildTemplate(t, name, BuildOptions.defaults().onLog(log::add).withTimeout(Duration.ofMinutes(10)));
    try {
      assertThat(messages(log)).anySatisfy(m -> assertThat(m).contains("FROM debian:bookworm-slim"));
      try (LiveSandbox s = e2b.create(SandboxSpec.of(built.name()))) {
        assertThat(s.exec("cat /etc/built-on; whoami; command -v python3 || echo no-python").stdout())
            .matches("12\\.\\d+\nroot\nno-python\n");
      }
    } finally {
      e2b.deleteTemplate(built.templateId());
    }
    assertThatThrownBy(() -> e2b.buildTemplate(Template.fromImage("debian:nosuchsuite").runCmd("true"), unique("jtpl-nosuite")))
        .isInstanceOfSatisfying(TemplateBuildException.class, e -> assertThat(e.reason()).contains("not a Debian suite"));
  }

  @Test
  @DisplayName("a build that outlasts its timeout throws TemplateBuildException naming the timeout")
  void timeout(E2BApi e2b) {
    String name = unique("jtpl-slow");
    // fails on its own once the test is done with it, so it never registers a template
    Template t = Template.fromTemplate("base").runCmd("echo slow-" + UUID.randomUUID() + "; sleep 20; exit 1");
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> e2b.buildTemplate(t, name, BuildOptions.defaults().withTimeout(Duration.ofSeconds(2))))
        .isInstanceOfSatisfying(TemplateBuildException.class, e -> assertThat(e.reason()).contains("did not finish within PT2S"));
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(15));
  }

  @Test
  @DisplayName("a COPY source outside the context is refused before any request: absolute, '..', through a linked folder, missing")
  void copyOutsideContextRefused(@TempDir Path dir) throws Exception {
    project(dir);
    Files.createSymbolicLink(dir.resolve("etc-link"), Path.of("/etc"));
    Template base = Template.fromTemplate("base").withContextDir(dir);
    assertThatThrownBy(() -> base.copy("/etc/passwd", "/tmp/x")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("absolute path");
    assertThatThrownBy(() -> base.copy("app/../../secret", "/tmp/x")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaves the context directory");

    // a server that counts what reaches it: nothing may
    AtomicInteger requests = new AtomicInteger();
    HttpServer counter = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    counter.createContext("/", ex -> {
      requests.incrementAndGet();
      ex.sendResponseHeaders(500, -1);
      ex.close();
    });
    counter.start();
    URI url = URI.create("http://127.0.0.1:" + counter.getAddress().getPort());
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().apiUrl(url).sandboxUrl(url).apiKey("test-key").build()) {
      E2BApi api = p.api();
      Template linked = base.copy("etc-link/hostname", "/tmp/x");
      assertThatThrownBy(() -> api.buildTemplate(linked, "jtpl-never")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("leaves the context directory").hasMessageContaining("symbolic link");
      Template globThroughLink = base.copy("etc-link/host*", "/tmp/x");
      assertThatThrownBy(() -> api.buildTemplate(globThroughLink, "jtpl-never")).as("a glob never follows a link out of the context")
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the pattern matches nothing");
      Template missing = base.copy("no-such-file", "/tmp/x");
      assertThatThrownBy(() -> api.buildTemplate(missing, "jtpl-never")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'no-such-file' not found");
      assertThatThrownBy(() -> api.buildTemplate(base.copy("app", "/opt/app"), " ")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("name must not be blank");
      assertThat(requests.get()).as("requests sent").isZero();
      // the same server does get a request for a COPY inside the context: the counter counts
      assertThatThrownBy(() -> api.buildTemplate(base.copy("app", "/opt/app"), "jtpl-counted")).isInstanceOf(SandboxApiException.class);
      assertThat(requests.get()).isEqualTo(1);
    } finally {
      counter.stop(0);
    }
  }
}
