package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxPausedException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Paused is paused: every call into a paused sandbox says so, handles report the state the server
 * has, a killed sandbox is "not found" (never "paused … not found"), and connect moves a running
 * sandbox's deadline only later, as E2B's does.
 */
@ExtendWith(SharedServer.class)
class PausedStateTest {

  @Test
  @DisplayName("every call into a paused sandbox throws SandboxPausedException naming it, not 'not found'; after a resume they all work again")
  void callsOnAPausedSandboxSayPaused(E2BApi e2b) {
    try (LiveSandbox s = e2b.create()) {
      s.writeFile("/home/user/kept.txt", "kept");
      assertThat(s.pause()).isTrue();
      ThrowingCallable[] calls = {
          () -> s.exec("true"),
          () -> s.readFile("/home/user/kept.txt"),
          () -> s.writeFile("/home/user/other.txt", "x"),
          () -> s.readDir("/home/user"),
          () -> s.deleteFile("/home/user/kept.txt"),
          () -> s.spawn("sleep 1", io.sandboxes.SpawnOptions.pipes()).close(),
      };
      for (ThrowingCallable call : calls) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SandboxPausedException.class, e -> {
          assertThat(e.sandboxId()).isEqualTo(s.id());
          assertThat(e.getMessage()).contains(s.id()).contains("is paused").contains("resume");
        }).isNotInstanceOf(SandboxNotFoundException.class);
      }
      assertThat(s.resume().mechanism()).isEqualTo("resume");
      assertThat(s.readFile("/home/user/kept.txt")).isEqualTo("kept");
      assertThat(s.exec("echo back").stdout()).isEqualTo("back\n");
    }
  }

  @Test
  @DisplayName("code runs on a paused code-interpreter sandbox throw SandboxPausedException too (its port answers for it); after a resume the kernel still has its state")
  void runCodeOnAPausedSandbox(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.of(SandboxSpec.CODE_INTERPRETER_TEMPLATE))) {
      s.runCode("kept = 'yes'").orThrow();
      s.pause();
      assertThatThrownBy(() -> s.runCode("kept")).isInstanceOfSatisfying(SandboxPausedException.class,
          e -> assertThat(e.getMessage()).contains(s.id()).contains("run code"));
      assertThatThrownBy(s::listCodeContexts).isInstanceOf(SandboxPausedException.class);
      s.resume();
      assertThat(s.runCode("kept").text()).isEqualTo("yes");
    }
  }

  @Test
  @DisplayName("on the wire, the daemon address of a paused sandbox answers 502 as E2B's proxy does, with a message that says paused")
  void wireSaysPaused(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      String token = Tokens.envdToken(server, s.id());
      s.pause();
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/files?path=/etc/hostname"))
          .header("E2b-Sandbox-Id", s.id()).header("E2b-Sandbox-Port", "49983").header("X-Access-Token", token).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(502);
      assertThat(r.body()).contains("\"sandboxId\":\"" + s.id() + "\"").contains("The sandbox is paused").doesNotContain("not found");
    }
  }

  @Test
  @DisplayName("an old handle's status follows the server: running after another handle resumed it, paused after another paused it, killed after a kill by id")
  void statusFollowsTheServer(E2BApi e2b) {
    LiveSandbox first = e2b.create();
    try {
      assertThat(first.status()).isEqualTo(SandboxState.RUNNING);
      first.pause();
      assertThat(first.status()).isEqualTo(SandboxState.PAUSED);
      LiveSandbox second = e2b.connect(first.id());
      assertThat(first.status()).as("resumed through another handle").isEqualTo(SandboxState.RUNNING);
      assertThat(first.exec("echo old handle").stdout()).isEqualTo("old handle\n");
      second.pause();
      assertThat(first.status()).as("paused through another handle").isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.kill(first.id())).isTrue();
      assertThat(first.status()).as("killed by id").isEqualTo(SandboxState.KILLED);
      assertThat(second.status()).isEqualTo(SandboxState.KILLED);
    } finally {
      first.close();
    }
    assertThat(first.status()).isEqualTo(SandboxState.KILLED);
  }

  @Test
  @DisplayName("connect after a kill says the sandbox does not exist (it was killed), never 'paused … not found'; a call on the old handle says not found")
  void connectAfterKill(E2BApi e2b) {
    LiveSandbox s = e2b.create();
    s.pause();
    assertThat(e2b.kill(s.id())).isTrue();
    assertThatThrownBy(() -> e2b.connect(s.id())).isInstanceOfSatisfying(SandboxNotFoundException.class, e -> {
      assertThat(e.sandboxId()).isEqualTo(s.id());
      assertThat(e.getMessage()).contains("doesn't exist").contains("killed").doesNotContainIgnoringCase("paused");
    });
    assertThatThrownBy(() -> s.exec("true")).isInstanceOf(SandboxNotFoundException.class).isNotInstanceOf(SandboxPausedException.class);
  }

  @Test
  @DisplayName("connect to a running sandbox moves its deadline only later, as E2B's: a longer deadline stays where it is, a sooner one becomes the timeout asked for")
  void connectExtendsOnly(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(20)))) {
      Instant before = e2b.info(s.id()).endAt();
      e2b.connect(s.id(), Duration.ofMinutes(1));
      assertThat(e2b.info(s.id()).endAt()).as("a shorter connect timeout leaves a later deadline alone").isEqualTo(before);
      e2b.connect(s.id(), Duration.ofMinutes(30));
      Instant later = e2b.info(s.id()).endAt();
      assertThat(later).as("a longer one moves it to 30 minutes from now")
          .isBetween(Instant.now().plus(Duration.ofMinutes(29)), Instant.now().plus(Duration.ofMinutes(30)).plusSeconds(1));
      e2b.connect(s.id());
      assertThat(e2b.info(s.id()).endAt()).as("the default 5 minutes leaves the 30 alone").isEqualTo(later);
    }
  }
}
