package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BTemplates;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.CopyItem;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.FileStepOptions;
import io.sandboxes.template.GitCloneOptions;
import io.sandboxes.template.ReadyCmd;
import io.sandboxes.template.RegistryCredentials;
import io.sandboxes.template.Template;
import io.sandboxes.template.TemplateTag;
import io.sandboxes.template.TemplateTagInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Template management through the Java client against the real local server and real Docker
 * builds: one template read from a Dockerfile and extended with every file step, built in the
 * background and polled to ready, then used; its name looked up; its tags assigned, listed and
 * removed. One build serves every test here (builds are slow).
 */
@ExtendWith(SharedServer.class)
class TemplateManagementTest {
  private static final String MARK = UUID.randomUUID().toString(); // no earlier run's cache applies
  private static final String NAME = "jmgmt-" + MARK.substring(0, 8);

  @TempDir
  static Path dir;

  private static BuildInfo built;
  private static final List<BuildLogEntry> LOG = new CopyOnWriteArrayList<>();
  private static BuildStatus.State firstRead;

  /** The Dockerfile: ARG, ENV (continued), WORKDIR, COPY --chown, RUN in both forms, EXPOSE, and a server as CMD that listens late. */
  private static final String DOCKERFILE = """
      # a small service
      FROM e2bdev/base
      ARG APP_MODE=demo
      ENV GREETING="hello from the dockerfile" \\
          BUILD_MARK=%s
      WORKDIR /srv
      COPY --chown=user site/ /srv/site/
      RUN ["sh", "-c", "echo exec-form-$BUILD_MARK > /srv/exec.txt"]
      RUN mkdir -p /tmp/repo && cd /tmp/repo && git init -q -b main && echo one > f.txt && git add f.txt \\
          && git -c user.name=t -c user.email=t@t commit -qm one && git checkout -q -b feature && echo two > f.txt \\
          && git -c user.name=t -c user.email=t@t commit -qam two && git checkout -q main && echo built-$BUILD_MARK
      EXPOSE 8000
      CMD ["sh", "-c", "sleep 4; exec python3 -m http.server 8000 --directory /srv/site"]
      """;

  @BeforeAll
  static void buildInBackground(E2BApi e2b) throws Exception {
    Files.createDirectories(dir.resolve("site"));
    Files.writeString(dir.resolve("site/index.html"), "served page\n");
    Files.writeString(dir.resolve("notes.txt"), "notes\n");
    Files.createDirectories(dir.resolve("data"));
    Files.writeString(dir.resolve("data/keep.txt"), "keep\n");
    Files.writeString(dir.resolve("data/drop.txt"), "drop\n");
    Path dockerfile = dir.resolve("Dockerfile");
    Files.writeString(dockerfile, DOCKERFILE.formatted(MARK));

    FileStepOptions asRoot = FileStepOptions.defaults().withUser("root");
    Template t = Template.fromDockerfile(dockerfile)
        .makeDir(List.of("/home/user/w/made/a", "/home/user/w/gone/x"), FileStepOptions.defaults().withMode(0750))
        .copyItems(List.of(CopyItem.of("notes.txt", "/home/user/w/notes.txt"), CopyItem.of("data", "/home/user/w/data"),
            new CopyItem("data/keep.txt", "/home/user/w/secret.txt", CopyOptions.defaults().withMode(0600))))
        .rename("/home/user/w/notes.txt", "/home/user/w/renamed.txt")
        .makeSymlink("/home/user/w/renamed.txt", "/home/user/w/link.txt")
        .remove(List.of("/home/user/w/data/drop.txt", "/home/user/w/never-there"), FileStepOptions.defaults().withForce())
        .remove(List.of("/home/user/w/gone"), FileStepOptions.defaults().withRecursive())
        .makeDir(List.of("/opt/by-root"), asRoot)
        .gitClone("file:///tmp/repo", "/opt/clone", GitCloneOptions.defaults().withBranch("feature").withDepth(1).withUser("root"))
        .setReadyCmd(ReadyCmd.waitForPort(8000));

    E2BTemplates templates = e2b.templates();
    built = templates.buildInBackground(t, NAME, io.sandboxes.template.BuildOptions.defaults().onLog(LOG::add));
    firstRead = templates.buildStatus(built, 0).state();
    AtomicReference<BuildStatus> last = new AtomicReference<>();
    int[] offset = {0};
    await().atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofMillis(500)).until(() -> {
      BuildStatus s = templates.buildStatus(built, offset[0]);
      LOG.addAll(s.logEntries());
      offset[0] += s.logEntries().size();
      last.set(s);
      return s.finished() && s.logEntries().isEmpty();
    });
    assertThat(last.get().state()).as("%s %s", last.get().reason(), LOG.stream().map(BuildLogEntry::message).toList())
        .isEqualTo(BuildStatus.State.READY);
  }

  @AfterAll
  static void delete(E2BApi e2b) {
    if (built != null) {
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> e2b.deleteTemplate(NAME) || true);
    }
  }

  @Test
  @DisplayName("buildInBackground answers before the build ends; its status, read page by page, carries the RUN's output to ready")
  void backgroundBuildPolled() {
    assertThat(firstRead).as("read right after buildInBackground answered").isIn(BuildStatus.State.WAITING, BuildStatus.State.BUILDING);
    assertThat(built.name()).isEqualTo(NAME);
    assertThat(LOG.stream().map(BuildLogEntry::message)).contains("Starting building...")
        .anyMatch(m -> m.matches("\\[builder \\d+/\\d+\\] \\[stdout\\]: built-" + MARK));
  }

  @Test
  @DisplayName("a sandbox from the Dockerfile template: its ENV, ARG, WORKDIR, COPY --chown, exec-form RUN, and its CMD ready on the"
      + " port; every file step's result is there")
  void sandboxFromTheBuild(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.of(NAME))) {
      // the server sleeps 4 s before it listens: only a create that waited for the port check gets an answer at once
      assertThat(s.exec("curl -s localhost:8000/index.html").stdout()).isEqualTo("served page\n");
      assertThat(s.exec("echo \"$GREETING|$APP_MODE|$BUILD_MARK\"; pwd; id -un").stdout())
          .as("ENV with quotes and a continuation, ARG as an env, WORKDIR kept, E2B's user after a Dockerfile without USER")
          .isEqualTo("hello from the dockerfile|demo|" + MARK + "\n/srv\nuser\n");
      assertThat(s.exec("cat /srv/exec.txt; stat -c %U /srv/site/index.html").stdout()).isEqualTo("exec-form-" + MARK + "\nuser\n");

      assertThat(s.exec("stat -c '%a %U' /home/user/w/made/a /opt/by-root").stdout()).as("makeDir: mode, and the user it ran as")
          .isEqualTo("750 user\n755 root\n");
      assertThat(s.exec("cat /home/user/w/renamed.txt; test -e /home/user/w/notes.txt; echo $?").stdout()).as("copyItems, rename")
          .isEqualTo("notes\n1\n");
      assertThat(s.exec("readlink /home/user/w/link.txt; cat /home/user/w/link.txt").stdout()).as("makeSymlink")
          .isEqualTo("/home/user/w/renamed.txt\nnotes\n");
      assertThat(s.exec("stat -c %a /home/user/w/secret.txt; ls /home/user/w/data; ls /home/user/w").stdout())
          .as("copyItems with a mode; remove with force; remove recursive")
          .isEqualTo("600\nkeep.txt\ndata\nlink.txt\nmade\nrenamed.txt\nsecret.txt\n");
      assertThat(s.exec("cat /opt/clone/f.txt; g() { git -c safe.directory=/opt/clone -C /opt/clone \"$@\"; }; g rev-list --count HEAD; g branch -r").stdout())
          .as("gitClone: the branch asked for, one commit deep, that branch alone").isEqualTo("two\n1\n  origin/feature\n");
    }
  }

  @Test
  @DisplayName("exists and aliasExists: true for the built name and base, false for a name never built")
  void existsAndAliasExists(E2BApi e2b) {
    E2BTemplates templates = e2b.templates();
    assertThat(templates.exists(NAME)).isTrue();
    assertThat(templates.aliasExists(NAME)).isTrue();
    assertThat(templates.exists("base")).isTrue();
    String never = "never-built-" + UUID.randomUUID().toString().substring(0, 8);
    assertThat(templates.exists(never)).isFalse();
    assertThat(templates.aliasExists(never)).isFalse();
  }

  @Test
  @DisplayName("tags: assigned to the build, listed with it, removed again; a tag on a template never built is a 404")
  void tags(E2BApi e2b) {
    E2BTemplates templates = e2b.templates();
    TemplateTagInfo assigned = templates.assignTags(NAME + ":default", List.of("stable", "v1"));
    assertThat(assigned.buildId()).isEqualTo(built.buildId());
    assertThat(assigned.tags()).containsExactlyInAnyOrder("stable", "v1");
    assertThat(templates.tags(NAME)).extracting(TemplateTag::tag).contains("default", "stable", "v1");
    assertThat(templates.tags(built.templateId())).allSatisfy(tag -> assertThat(tag.buildId()).isEqualTo(built.buildId()));

    templates.removeTags(NAME, List.of("stable"));
    assertThat(templates.tags(NAME)).extracting(TemplateTag::tag).contains("default", "v1").doesNotContain("stable");

    assertThatThrownBy(() -> templates.tags("never-built-" + UUID.randomUUID().toString().substring(0, 8)))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
  }

  @Test
  @DisplayName("a base image with registry credentials reaches the server, which refuses it (it pulls nothing); the password is never"
      + " in what the client reports")
  void registryCredentialsRefusedLocally(E2BApi e2b) {
    String password = "pw-" + UUID.randomUUID();
    Template t = Template.fromImage("registry.invalid/team/private:1", new RegistryCredentials.Basic("robot", password));
    assertThatThrownBy(() -> e2b.templates().buildInBackground(t, "jmgmt-registry-" + MARK.substring(0, 8)))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(400);
          assertThat(e.getMessage()).contains("fromImageRegistry").doesNotContain(password);
        });
  }
}
