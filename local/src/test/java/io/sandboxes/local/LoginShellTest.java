package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.ExecOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The base template's login shell, which every command runs in: its {@code /etc/profile} takes the
 * uid from bash itself rather than from a forked {@code id -u}, and still gives each user Debian's
 * PATH, in bash and in a shell that has no {@code $EUID} (dash, as {@code sh -l}).
 */
@ExtendWith(SharedServer.class)
class LoginShellTest {
  private static final String USER_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games";
  private static final String ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  @Test
  @DisplayName("a command's login shell gives root the sbin folders and the default user not, in bash and in sh -l")
  void pathByUser(E2BApi e2b) {
    try (LiveSandbox sandbox = e2b.create()) {
      ExecOptions root = ExecOptions.defaults().withUser("root");
      assertThat(sandbox.exec("echo $PATH").orThrow().stdout()).isEqualTo(USER_PATH + "\n");
      assertThat(sandbox.exec("echo $PATH", root).orThrow().stdout()).isEqualTo(ROOT_PATH + "\n");
      // dash has no $EUID: the profile asks id, as Debian's does
      String dash = "env -i HOME=$HOME sh -l -c 'echo $PATH'";
      assertThat(sandbox.exec(dash).orThrow().stdout()).isEqualTo(USER_PATH + "\n");
      assertThat(sandbox.exec(dash, root).orThrow().stdout()).isEqualTo(ROOT_PATH + "\n");
      assertThat(sandbox.exec("grep -c 'EUID:-$(id -u)' /etc/profile").orThrow().stdout().strip())
          .as("the profile's uid checks that read bash's own").isEqualTo("2");
    }
  }
}
