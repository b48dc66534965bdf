package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

/**
 * Issue 21, class 7: a sandbox's container frozen from outside the server ({@code docker pause}
 * through the Docker API, as an operator or another tool would) cannot answer; calls into it
 * (exec, read, write, list, stat) answer within {@link #BOUND} with an error saying it is frozen
 * from outside, instead of waiting for an unpause. After {@code docker unpause} they work again.
 * The server's own pause, which freezes the container too, stays a pause.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OutsidePauseTest {
  /** Before the fix every one of these calls waited until the unpause. */
  private static final Duration BOUND = Duration.ofSeconds(10);
  /**
   * How long a call to a frozen sandbox may take to be refused: the freeze is seen within about
   * 3 s on a quiet machine, and CI's loaded runs took over 10; a call that is not refused waits
   * out its own timeout (60 s for exec), which this bound still misses by far.
   */
  private static final Duration FROZEN_BOUND = Duration.ofSeconds(25);
  private DockerRuntime docker;

  @BeforeAll
  void connect() {
    docker = DockerRuntime.connect();
  }

  @AfterAll
  void close() {
    docker.close();
  }

  /** Each call the client makes, by name, run against the frozen sandbox. */
  private static Map<String, Executable> calls(LiveSandbox s) {
    Map<String, Executable> calls = new LinkedHashMap<>();
    calls.put("exec", () -> s.exec("echo hi"));
    calls.put("read", () -> s.readBytes("/tmp/kept.txt"));
    calls.put("write", () -> s.writeBytes("/tmp/new.txt", "new".getBytes(StandardCharsets.UTF_8)));
    calls.put("list", () -> s.readDir("/tmp"));
    calls.put("delete", () -> s.deleteFile("/tmp/kept.txt"));
    return calls;
  }

  private static void eachAnswersFrozen(LiveSandbox s) {
    calls(s).forEach((name, call) -> assertTimeoutPreemptively(FROZEN_BOUND, () ->
        assertThatThrownBy(call::execute).as(name).isInstanceOf(SandboxException.class).hasMessageContaining("frozen from outside"),
        name + " did not answer within " + FROZEN_BOUND.toSeconds() + " s"));
  }

  private static void worksAgain(LiveSandbox s) {
    await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
        .untilAsserted(() -> assertThat(s.exec("echo back").stdout()).isEqualTo("back\n"));
    assertThat(new String(s.readBytes("/tmp/kept.txt"), StandardCharsets.UTF_8)).isEqualTo("kept");
    s.writeBytes("/tmp/new.txt", "new".getBytes(StandardCharsets.UTF_8));
    assertThat(s.readDir("/tmp")).anyMatch(e -> e.name().equals("new.txt"));
  }

  private String containerOf(LocalServer server, String id) {
    return server.registry().find(id).orElseThrow().instanceId();
  }

  /**
   * {@code docker pause}, tried again while it fails: the kernel's freezer can fail to settle on a
   * loaded machine ("unable to freeze"; runc thaws the container again), which is this test's own
   * tool failing, not the server.
   */
  private void pauseFromOutside(String container) {
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
        .ignoreExceptionsInstanceOf(com.github.dockerjava.api.exception.InternalServerErrorException.class).until(() -> {
          docker.client().pauseContainerCmd(container).exec();
          return true;
        });
  }

  @Test
  @DisplayName("docker pause from outside: exec, read, write, list and delete each fail within 10 s saying so; after docker unpause they work")
  void frozenFromOutside(E2BApi e2b, LocalServer server) {
    LiveSandbox s = e2b.create();
    try {
      s.writeBytes("/tmp/kept.txt", "kept".getBytes(StandardCharsets.UTF_8));
      String container = containerOf(server, s.id());
      pauseFromOutside(container);
      try {
        // Docker's pause event alone (no call has waited yet) has the server see the freeze: no call is made before it is
        // seen, so the bound only has to cover the event's way on a loaded machine (3 s was missed with two builds running)
        await().atMost(Duration.ofSeconds(10)).until(() -> server.registry().find(s.id()).orElseThrow().frozenFromOutside());
        eachAnswersFrozen(s);
        // the control plane still knows it, and refuses its own pause clearly rather than after a retry loop
        assertThat(e2b.info(s.id()).id()).isEqualTo(s.id());
        assertThatThrownBy(() -> e2b.pause(s.id(), true)).hasMessageContaining("frozen from outside");
      } finally {
        docker.client().unpauseContainerCmd(container).exec();
      }
      worksAgain(s);
    } finally {
      s.kill();
    }
  }

  @Test
  @DisplayName("the pause event missed (Docker's event stream down): a call that waits 1 s has the container looked at, and fails within 10 s")
  void freezeSeenWithoutTheEvent(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox s = e2b.create();
    try {
      s.writeBytes("/tmp/kept.txt", "kept".getBytes(StandardCharsets.UTF_8));
      String container = containerOf(server, s.id());
      try (AutoCloseable down = server.registry().suspendEventsForTesting()) {
        pauseFromOutside(container);
        try {
          eachAnswersFrozen(s);
        } finally {
          docker.client().unpauseContainerCmd(container).exec();
        }
      }
      worksAgain(s);
    } finally {
      s.kill();
    }
  }

  @Test
  @DisplayName("a sandbox frozen from outside can be killed")
  void killWhileFrozen(E2BApi e2b, LocalServer server) {
    LiveSandbox s = e2b.create();
    String container = containerOf(server, s.id());
    pauseFromOutside(container);
    assertTimeoutPreemptively(BOUND, () -> assertThat(s.kill()).isTrue());
    await().atMost(Duration.ofSeconds(30)).until(() -> docker.client().listContainersCmd().withShowAll(true)
        .withIdFilter(java.util.List.of(container)).exec().isEmpty());
  }

  @Test
  @DisplayName("the server's own pause (which freezes the container too) is a pause, never a freeze from outside")
  void ownPauseIsNoOutsideFreeze(E2BApi e2b, LocalServer server) {
    LiveSandbox s = e2b.create();
    try {
      assertThat(e2b.pause(s.id(), true)).isTrue();
      await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
          .until(() -> !server.registry().find(s.id()).orElseThrow().frozenFromOutside());
      LiveSandbox resumed = e2b.connect(s.id());
      assertThat(resumed.exec("echo alive").stdout()).isEqualTo("alive\n");
      assertThat(server.registry().find(s.id()).orElseThrow().frozenFromOutside()).isFalse();
    } finally {
      s.kill();
    }
  }
}
