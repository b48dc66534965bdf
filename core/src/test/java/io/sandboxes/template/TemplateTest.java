package io.sandboxes.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The builder's steps as E2B's build API receives them, and the input it refuses before any build. */
class TemplateTest {

  @Test
  @DisplayName("each step is E2B's: install helpers are RUN as root, several commands joined with &&, COPY with user and octal mode")
  void stepsAsE2BSendsThem() {
    Template t = Template.fromTemplate("base")
        .aptInstall("git", "curl=7.88*")
        .pipInstall("requests==2.32.3")
        .npmInstall("typescript@5")
        .runCmd(List.of("make", "make install"))
        .runCmd("id", "user")
        .copy("./app/../app", "/opt/app", CopyOptions.defaults().withUser("root").withMode(0640))
        .setEnvs(Map.of("A", "1"))
        .setWorkdir("/opt/app")
        .setUser("user")
        .setStartCmd("serve", "check");
    assertThat(t.steps()).extracting(TemplateStep::type).containsExactly(TemplateStep.Type.RUN, TemplateStep.Type.RUN,
        TemplateStep.Type.RUN, TemplateStep.Type.RUN, TemplateStep.Type.RUN, TemplateStep.Type.COPY, TemplateStep.Type.ENV,
        TemplateStep.Type.WORKDIR, TemplateStep.Type.USER);
    assertThat(t.steps().get(0).args()).containsExactly("apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes"
        + " apt-get install -y git 'curl=7.88*'", "root");
    assertThat(t.steps().get(1).args()).containsExactly("pip install requests==2.32.3", "root");
    assertThat(t.steps().get(2).args()).containsExactly("npm install -g typescript@5", "root");
    assertThat(t.steps().get(3).args()).containsExactly("make && make install");
    assertThat(t.steps().get(4).args()).containsExactly("id", "user");
    assertThat(t.steps().get(5).args()).containsExactly("app", "/opt/app", "root", "0640");
    assertThat(t.steps().get(6).args()).containsExactly("A", "1");
    assertThat(t.startCmd()).isEqualTo("serve");
    assertThat(t.readyCmd()).isEqualTo("check");
    assertThat(t.fromTemplate()).isEqualTo("base");
    assertThat(t.fromImage()).isNull();
    assertThat(t.contextDir()).isEqualTo(Path.of("").toAbsolutePath());
    assertThat(Template.fromBaseImage().fromImage()).isEqualTo("e2bdev/base");
  }

  @Test
  @DisplayName("a template is immutable: a step returns a new template and the old one is unchanged; skipCache forces only later steps")
  void immutableAndSkipCache() {
    Template base = Template.fromImage("debian:bookworm-slim").runCmd("true");
    Template more = base.runCmd("echo more");
    assertThat(base.steps()).hasSize(1);
    assertThat(more.steps()).hasSize(2);
    Template forced = more.skipCache().runCmd("echo forced").copy("x", "/x", CopyOptions.defaults().withForceUpload());
    assertThat(forced.steps()).extracting(TemplateStep::force).containsExactly(false, false, true, true);
    assertThat(forced.steps().get(3).forceUpload()).isTrue();
    assertThat(more.copy("x", "/x", CopyOptions.defaults().withForceUpload()).steps().get(2).force())
        .as("a forced upload also rebuilds its step, as E2B's SDK does").isTrue();
    assertThatThrownBy(() -> base.steps().add(null)).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  @DisplayName("bad input is refused by name: blank or empty commands, packages, users, env names, copy sources outside the context")
  void refusals() {
    Template t = Template.fromTemplate("base");
    assertThatThrownBy(() -> Template.fromTemplate(" ")).hasMessage("template must not be blank");
    assertThatThrownBy(() -> Template.fromImage("")).hasMessage("image must not be blank");
    assertThatThrownBy(() -> t.runCmd(" ")).hasMessage("command must not be blank");
    assertThatThrownBy(() -> t.runCmd(List.of())).hasMessage("commands must not be empty");
    assertThatThrownBy(() -> t.runCmd(List.of("ok", ""))).hasMessage("command must not be blank");
    assertThatThrownBy(() -> t.runCmd("id", "bad user")).hasMessageContaining("not a user name");
    assertThatThrownBy(t::aptInstall).hasMessage("name at least one package");
    assertThatThrownBy(() -> t.pipInstall("ok", " ")).hasMessage("package must not be blank");
    assertThatThrownBy(() -> t.setEnvs(Map.of("1BAD", "x"))).hasMessageContaining("'1BAD'");
    assertThatThrownBy(() -> t.setWorkdir("")).hasMessage("workdir must not be blank");
    assertThatThrownBy(() -> t.setUser("")).hasMessage("user must not be blank");
    assertThatThrownBy(() -> t.setStartCmd("run", " ")).hasMessage("readyCmd must not be blank");
    assertThatThrownBy(() -> t.copy("/etc/passwd", "/x")).hasMessageContaining("absolute path");
    assertThatThrownBy(() -> t.copy("..", "/x")).hasMessageContaining("leaves the context directory");
    assertThatThrownBy(() -> t.copy("a/../../b", "/x")).hasMessageContaining("leaves the context directory");
    assertThat(t.copy("src/*.java", "/x").steps().get(0).args().get(0)).as("a glob, as E2B's copy takes it").isEqualTo("src/*.java");
    assertThatThrownBy(() -> t.copy("src/../../*.java", "/x")).hasMessageContaining("leaves the context directory");
    assertThatThrownBy(() -> t.copy("a", " ")).hasMessage("dest must not be blank");
    assertThat(t.copy("..myconfig", "/x").steps().get(0).args().get(0)).as("a name starting with dots is no escape").isEqualTo("..myconfig");
    assertThat(t.copy("./", "/x").steps().get(0).args().get(0)).isEqualTo(".");
    assertThatThrownBy(() -> CopyOptions.defaults().withMode(010000)).hasMessageContaining("07777");
    assertThatThrownBy(() -> BuildOptions.defaults().withTimeout(Duration.ZERO)).hasMessageContaining("timeout must be positive");
    assertThatThrownBy(() -> BuildOptions.defaults().withCpuCount(0)).hasMessageContaining("cpuCount");
    assertThatThrownBy(() -> BuildOptions.defaults().withTags(List.of(" "))).hasMessageContaining("tag must not be blank");
  }

  @Test
  @DisplayName("install options make E2B 2.51's commands and users: apt's two flags, pip --user or . , npm and bun -g/dev or the project; a flag of another manager is refused")
  void installOptions() {
    Template t = Template.fromTemplate("base")
        .install(PackageInstall.apt("curl", "git").noInstallRecommends().fixMissing())
        .install(PackageInstall.pip("requests").user())
        .install(PackageInstall.pip())
        .install(PackageInstall.npm("typescript@5").global().dev())
        .install(PackageInstall.npm())
        .install(PackageInstall.bun("zod").dev())
        .install(PackageInstall.bun().global());
    assertThat(t.steps()).extracting(TemplateStep::args).containsExactly(
        List.of("apt-get update && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y --no-install-recommends"
            + " --fix-missing curl git", "root"),
        List.of("pip install --user requests"),
        List.of("pip install .", "root"),
        List.of("npm install -g --save-dev typescript@5", "root"),
        List.of("npm install"),
        List.of("bun install --dev zod"),
        List.of("bun install -g", "root"));
    assertThat(Template.fromTemplate("base").aptInstall("git").steps())
        .isEqualTo(Template.fromTemplate("base").install(PackageInstall.apt("git")).steps());
    assertThatThrownBy(() -> PackageInstall.pip("x").global()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pip");
    assertThatThrownBy(() -> PackageInstall.npm().user()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PackageInstall.bun().noInstallRecommends()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PackageInstall.apt("x").dev()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PackageInstall.apt()).isInstanceOf(IllegalArgumentException.class);
    assertThat(PackageInstall.npm("a; rm -rf /").toString()).as("a name that is not a plain word is quoted")
        .contains("npm install 'a; rm -rf /'");
  }
}
