package io.sandboxes.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The builder's file steps, readiness checks and Dockerfile reading as steps on the client: the
 * exact commands and steps sent, and the refusals (what a sandbox does with them is tested against
 * the local server in {@code TemplateManagementTest}).
 */
class TemplateStepsTest {

  private static List<String> runs(Template t) {
    return t.steps().stream().map(s -> s.type() + " " + String.join(" | ", s.args())).toList();
  }

  @Test
  @DisplayName("remove, rename, makeDir, makeSymlink and gitClone are RUN steps with quoted paths after --, and the step's user")
  void fileStepCommands() {
    Template t = Template.fromTemplate("base")
        .remove("/tmp/a b")
        .remove(List.of("/x", "-y"), FileStepOptions.defaults().withRecursive().withForce().withUser("root"))
        .rename("/a", "/b's", FileStepOptions.defaults().withForce())
        .makeDir(List.of("/d1", "/d2"), FileStepOptions.defaults().withMode(0750))
        .makeSymlink("/target", "/link", FileStepOptions.defaults().withForce())
        .makeDir("/plain")
        .gitClone("https://example.com/r.git", "/src", GitCloneOptions.defaults().withBranch("dev").withDepth(1).withUser("user"))
        .gitClone("https://example.com/r.git", null, GitCloneOptions.defaults());
    assertThat(runs(t)).containsExactly(
        "RUN rm -- '/tmp/a b'",
        "RUN rm -r -f -- '/x' '-y' | root",
        "RUN mv -f -- '/a' '/b'\\''s'",
        "RUN mkdir -p -m 0750 -- '/d1' '/d2'",
        "RUN ln -s -f -n -- '/target' '/link'",
        "RUN mkdir -p -- '/plain'",
        "RUN git clone --branch 'dev' --single-branch --depth 1 -- 'https://example.com/r.git' '/src' | user",
        "RUN git clone -- 'https://example.com/r.git'");
  }

  @Test
  @DisplayName("a file step refuses an option it has no use for, a missing path, and a malformed user or branch")
  void fileStepRefusals() {
    Template t = Template.fromTemplate("base");
    assertThatThrownBy(() -> t.rename("/a", "/b", FileStepOptions.defaults().withRecursive())).hasMessageContaining("rename takes no recursive");
    assertThatThrownBy(() -> t.remove(List.of("/a"), FileStepOptions.defaults().withMode(0700))).hasMessageContaining("remove takes no a mode");
    assertThatThrownBy(() -> t.makeDir(List.of("/a"), FileStepOptions.defaults().withForce())).hasMessageContaining("makeDir takes no force");
    assertThatThrownBy(() -> t.makeSymlink("/a", "/b", FileStepOptions.defaults().withMode(0700))).hasMessageContaining("a mode");
    assertThatThrownBy(() -> t.remove(List.of(), FileStepOptions.defaults())).hasMessageContaining("at least one path");
    assertThatThrownBy(() -> t.makeDir(" ")).hasMessageContaining("blank");
    assertThatThrownBy(() -> FileStepOptions.defaults().withUser("root; rm -rf /")).hasMessageContaining("not a user name");
    assertThatThrownBy(() -> GitCloneOptions.defaults().withBranch("--upload-pack=x")).hasMessageContaining("branch name");
    assertThatThrownBy(() -> GitCloneOptions.defaults().withDepth(0)).hasMessageContaining("at least 1");
  }

  @Test
  @DisplayName("a word the shell would read as a redirection or a home directory is quoted: in install steps and exec-form RUN")
  void shellWords() {
    assertThat(runs(Template.fromTemplate("base").pipInstall("requests>=2.31", "numpy<2", "plain==1.0", "~user", "a~=1")))
        .containsExactly("RUN pip install 'requests>=2.31' 'numpy<2' plain==1.0 '~user' a~=1 | root");
    assertThat(runs(Template.fromDockerfile("FROM a\nRUN [\"echo\", \"a>b\"]\n")).get(2)).isEqualTo("RUN echo 'a>b'");
  }

  @Test
  @DisplayName("copyItems adds one COPY per item with its options, checked as copy checks them")
  void copyItems() {
    Template t = Template.fromTemplate("base").copyItems(List.of(CopyItem.of("a", "/x/"),
        new CopyItem("b/c.txt", "/y", CopyOptions.defaults().withUser("root").withMode(0600).withForceUpload())));
    assertThat(t.steps()).containsExactly(
        new TemplateStep(TemplateStep.Type.COPY, List.of("a", "/x/", "", ""), false, false),
        new TemplateStep(TemplateStep.Type.COPY, List.of("b/c.txt", "/y", "root", "0600"), true, true));
    assertThatThrownBy(() -> Template.fromTemplate("base").copyItems(List.of(CopyItem.of("../out", "/x"))))
        .hasMessageContaining("leaves the context directory");
    assertThatThrownBy(() -> Template.fromTemplate("base").copyItems(List.of())).hasMessageContaining("at least one item");
  }

  @Test
  @DisplayName("copy of several sources adds one COPY each with the same destination and options; ignore patterns are kept, checked")
  void copySeveralSourcesAndIgnorePatterns() {
    Template t = Template.fromTemplate("base").copy(List.of("a.txt", "src/*.py"), "/x/", CopyOptions.defaults().withUser("root"));
    assertThat(t.steps()).containsExactly(
        new TemplateStep(TemplateStep.Type.COPY, List.of("a.txt", "/x/", "root", ""), false, false),
        new TemplateStep(TemplateStep.Type.COPY, List.of("src/*.py", "/x/", "root", ""), false, false));
    assertThatThrownBy(() -> Template.fromTemplate("base").copy(List.of("ok", "../out"), "/x", CopyOptions.defaults()))
        .hasMessageContaining("leaves the context directory");
    assertThatThrownBy(() -> Template.fromTemplate("base").copy(List.of(), "/x", CopyOptions.defaults()))
        .hasMessageContaining("at least one source");

    Template ignoring = Template.fromTemplate("base").withFileIgnorePatterns(List.of("**/*.log", "node_modules/**"));
    assertThat(ignoring.fileIgnorePatterns()).containsExactly("**/*.log", "node_modules/**");
    assertThat(ignoring.copy("app", "/app").fileIgnorePatterns()).as("kept by the next steps").containsExactly("**/*.log", "node_modules/**");
    assertThat(Template.fromTemplate("base").fileIgnorePatterns()).isEmpty();
    assertThatThrownBy(() -> ignoring.withFileIgnorePatterns(List.of("/etc/**"))).hasMessageContaining("relative");
    assertThatThrownBy(() -> ignoring.withFileIgnorePatterns(List.of("!keep.txt"))).hasMessageContaining("not negated");
    assertThatThrownBy(() -> ignoring.withFileIgnorePatterns(List.of(" "))).hasMessageContaining("must not be blank");
  }

  @Test
  @DisplayName("the ReadyCmd helpers: E2B's checks, a port check that works without ss, exact status match, quoted names")
  void readyCommands() {
    String port = ReadyCmd.waitForPort(8000).command();
    assertThat(port).contains("ss -Htuln sport = :8000", "\"1F40\"", "/proc/net/tcp");
    assertThat(ReadyCmd.waitForUrl("http://localhost:3000/health?a=1&b=2").command())
        .isEqualTo("[ \"$(curl -s -o /dev/null -w '%{http_code}' 'http://localhost:3000/health?a=1&b=2')\" = \"200\" ]");
    assertThat(ReadyCmd.waitForProcess("my daemon").command()).isEqualTo("pgrep 'my daemon' > /dev/null");
    assertThat(ReadyCmd.waitForFile("/tmp/ready").command()).isEqualTo("[ -f '/tmp/ready' ]");
    assertThat(ReadyCmd.waitForTimeout(Duration.ofMillis(300)).command()).isEqualTo("sleep 1");
    assertThat(ReadyCmd.waitForTimeout(Duration.ofMillis(2500)).command()).isEqualTo("sleep 2");
    assertThatThrownBy(() -> ReadyCmd.waitForPort(0)).hasMessageContaining("1 to 65535");
    Template t = Template.fromTemplate("base").setStartCmd("./serve", ReadyCmd.waitForFile("/r"));
    assertThat(t.startCmd()).isEqualTo("./serve");
    assertThat(t.readyCmd()).isEqualTo("[ -f '/r' ]");
    assertThat(t.setReadyCmd(ReadyCmd.waitForProcess("x")).readyCmd()).isEqualTo("pgrep 'x' > /dev/null");
  }

  @Test
  @DisplayName("fromDockerfile: FROM as the base, Docker's root and / first, each instruction a step, E2B's user and workdir last"
      + " when unset, exec-form CMD as the start command with a 20 s wait")
  void dockerfileSteps(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("Dockerfile");
    Files.writeString(file, """
        # escape=\\
        FROM python:3.12-slim AS app
        # a comment
        ARG MODE=prod VERBOSE
        ENV A=1 B="two words" C=with\\ space
        ENV LEGACY value with spaces
        RUN apt-get update \\
          # a comment inside a continuation

          && echo done
        RUN ["echo", "it's", "x"]
        COPY --chown=user:user --chmod=640 a.txt b/ /app/
        ADD --chmod=600 ["c  d.txt", "/app/c.txt"]
        EXPOSE 8080
        VOLUME /data
        ENTRYPOINT ["python3", "-m"]
        CMD ["http.server", "8080"]
        """);
    Template t = Template.fromDockerfile(file);
    assertThat(t.fromImage()).isEqualTo("python:3.12-slim");
    assertThat(t.contextDir()).isEqualTo(dir.toAbsolutePath().normalize());
    assertThat(runs(t)).containsExactly(
        "USER root",
        "WORKDIR /",
        "ENV MODE | prod | VERBOSE | ",
        "ENV A | 1 | B | two words | C | with space",
        "ENV LEGACY | value with spaces",
        "RUN apt-get update   && echo done",
        "RUN echo 'it'\\''s' x",
        "COPY a.txt | /app/ | user | 0640",
        "COPY b | /app/ | user | 0640",
        "COPY c  d.txt | /app/c.txt |  | 0600",
        "USER user",
        "WORKDIR /home/user");
    assertThat(t.startCmd()).isEqualTo("python3 -m http.server 8080");
    assertThat(t.readyCmd()).isEqualTo("sleep 20");

    Template own = Template.fromDockerfile("FROM debian\nUSER nobody\nWORKDIR /w\nCMD echo hi\n");
    assertThat(runs(own)).as("a Dockerfile's own user and workdir stay").containsExactly("USER root", "WORKDIR /", "USER nobody", "WORKDIR /w");
    assertThat(own.startCmd()).isEqualTo("echo hi");
    assertThat(Template.fromDockerfile("FROM debian\nENTRYPOINT exec srv\nCMD [\"ignored\"]\n").startCmd())
        .as("a shell-form ENTRYPOINT ignores CMD, as Docker does").isEqualTo("exec srv");
  }

  @Test
  @DisplayName("fromDockerfile refuses what it cannot take, naming the line, rather than drop it")
  void dockerfileRefusals() {
    assertThatThrownBy(() -> Template.fromDockerfile("RUN true\n")).hasMessageContaining("no FROM");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a AS b\nRUN x\nFROM c\n")).hasMessage(
        "Dockerfile line 3: several stages (a second FROM) are not supported: use one FROM");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\n\nHEALTHCHECK CMD true\n")).hasMessageStartingWith(
        "Dockerfile line 3: HEALTHCHECK is not supported");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nLABEL x=y\n")).hasMessageStartingWith("Dockerfile line 2: LABEL");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nCOPY --from=build /x /y\n")).hasMessageContaining("line 2: COPY --from");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nADD https://x.example/f /f\n")).hasMessageContaining("of a URL");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nADD app.tar.gz /app\n")).hasMessageContaining("archive");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nRUN --mount=type=cache,target=/c true\n")).hasMessageContaining(
        "RUN flags (--mount=type=cache,target=/c)");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nRUN <<EOF\necho\nEOF\n")).hasMessageContaining("line 2: heredocs");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nENV PATH=/opt/bin:$PATH\n")).hasMessageContaining(
        "line 2: variable substitution");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM $BASE\n")).hasMessageContaining("variable substitution");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nWORKDIR ${HOME}/x\n")).hasMessageContaining("variable substitution");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nCOPY ../secret /s\n")).hasMessageContaining(
        "line 2: copy source '../secret' leaves the context directory");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM a\nUSER app:staff\n")).hasMessageContaining("a group");
    assertThatThrownBy(() -> Template.fromDockerfile("FROM --platform=linux/arm64 a\n")).hasMessageContaining("FROM flags");
    assertThat(Template.fromDockerfile("FROM a\nENV P=\\$HOME\n").steps().get(2).args()).as("an escaped $ is a literal $")
        .containsExactly("P", "$HOME");
  }

  @Test
  @DisplayName("registry credentials: kept with the template, never shown by toString")
  void registryCredentials() {
    RegistryCredentials.Basic basic = new RegistryCredentials.Basic("robot", "hunter2-password");
    Template t = Template.fromImage("ghcr.io/team/img:1", basic).runCmd("true");
    assertThat(t.registryCredentials()).isEqualTo(basic);
    assertThat(t.fromImage()).isEqualTo("ghcr.io/team/img:1");
    assertThat(basic.toString()).contains("robot").doesNotContain("hunter2");
    assertThat(new RegistryCredentials.Aws("AKIA1", "aws-secret-key-1", "eu-west-1").toString()).doesNotContain("aws-secret-key-1");
    assertThat(new RegistryCredentials.Gcp("{\"private_key\":\"k-123456789\"}").toString()).doesNotContain("k-123456789");
    assertThatThrownBy(() -> new RegistryCredentials.Basic("robot", " ")).hasMessageContaining("password must not be blank");
  }
}
