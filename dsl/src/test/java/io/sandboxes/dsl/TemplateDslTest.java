package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxApiException;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildLogEntry;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.Template;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TemplateDslTest {

  @Test
  @DisplayName("Sandboxes.local(): buildTemplate with a log callback, then sandbox().template(built) boots from it; deleteTemplate is"
      + " refused with 409 while that sandbox lives")
  void buildThenBoot(@TempDir Path project) throws Exception {
    Files.writeString(project.resolve("greet.sh"), "#!/bin/sh\necho \"hello from $(cat /home/user/built.txt)\"\n");
    String mark = UUID.randomUUID().toString().substring(0, 8);
    Template tools = Template.fromTemplate("base")
        .withContextDir(project)
        .copy("greet.sh", "/home/user/greet.sh", CopyOptions.defaults().withMode(0755))
        .runCmd("echo built-by-$(id -un)-" + mark + " | tee /home/user/built.txt");
    String name = "dsl-tpl-" + mark;
    try (SandboxClient sandboxes = Sandboxes.local()) {
      List<BuildLogEntry> log = new CopyOnWriteArrayList<>();
      BuildInfo built = sandboxes.buildTemplate(tools, name, log::add);
      assertThat(log).extracting(BuildLogEntry::message).contains("[builder 2/2] [stdout]: built-by-user-" + mark);
      try (LiveSandbox sandbox = sandboxes.sandbox().template(built).create()) {
        assertThat(sandbox.exec("/home/user/greet.sh").stdout()).isEqualTo("hello from built-by-user-" + mark + "\n");
        assertThatThrownBy(() -> sandboxes.deleteTemplate(name))
            .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(409));
      }
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).ignoreExceptions()
          .until(() -> sandboxes.deleteTemplate(name));
      assertThat(sandboxes.provider().api().templateExists(name)).isFalse();
    }
  }
}
