package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxLifecycle;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.SandboxInfo;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.SandboxState;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Pause, resume and deadlines on the local server, observed through the Java client. */
@ExtendWith(SharedServer.class)
class LifecycleTest {

  /** Starts a background process and returns its pid. */
  private static String startSleeper(LiveSandbox s) {
    return s.exec("nohup sleep 600 >/dev/null 2>&1 & echo $!").stdout().strip();
  }

  private static boolean alive(LiveSandbox s, String pid) {
    // by command line, not just pid: after a restart the same pid may belong to another process
    return s.exec("ps -o args= -p " + pid + " | grep -qx 'sleep 600' && echo alive || echo gone").stdout().strip().equals("alive");
  }

  @Test
  @DisplayName("a memory pause freezes the sandbox: paused in info and listing, daemon silent, a second pause is false; connect resumes it with its process alive")
  void memoryPause(E2BApi e2b) {
    String tag = UUID.randomUUID().toString();
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withMetadata(Map.of("tag", tag)))) {
      String pid = startSleeper(s);
      s.writeFile("/home/user/kept.txt", "kept");
      assertThat(s.pause()).isTrue();
      assertThat(s.pause()).isFalse();
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.PAUSED);
      assertThat(e2b.listAll(SandboxQuery.all().withMetadata(Map.of("tag", tag)).withStates(Set.of(SandboxState.PAUSED))))
          .extracting(SandboxInfo::id).containsExactly(s.id());
      assertThat(e2b.listAll(SandboxQuery.all().withMetadata(Map.of("tag", tag)).withStates(Set.of(SandboxState.RUNNING)))).isEmpty();
      assertThatThrownBy(() -> s.exec("true")).isInstanceOf(io.sandboxes.SandboxPausedException.class);

      LiveSandbox resumed = e2b.connect(s.id());
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
      assertThat(alive(resumed, pid)).isTrue();
      assertThat(resumed.readFile("/home/user/kept.txt")).isEqualTo("kept");
    }
  }

  @Test
  @DisplayName("back-to-back pause and resume, again and again: each resumed sandbox answers at once (Docker's late pause events are waited out)")
  void quickPauseResumeCycles(E2BApi e2b) {
    try (LiveSandbox s = e2b.create()) {
      s.writeFile("/home/user/cycle.txt", "0");
      LiveSandbox current = s;
      for (int cycle = 1; cycle <= 15; cycle++) {
        assertThat(e2b.pause(s.id(), true)).isTrue();
        current = e2b.connect(s.id());
        current.writeFile("/home/user/cycle.txt", Integer.toString(cycle));
        assertThat(current.readFile("/home/user/cycle.txt")).isEqualTo(Integer.toString(cycle));
      }
    }
  }

  @Test
  @DisplayName("a filesystem-only pause keeps files but not processes")
  void filesystemPause(E2BApi e2b) {
    try (LiveSandbox s = e2b.create()) {
      assertThat(e2b.info(s.id()).lifecycle()).as("a default sandbox is killed at its timeout")
          .isEqualTo(new SandboxLifecycle(false, false));
      String pid = startSleeper(s);
      s.writeFile("/home/user/kept.txt", "kept");
      assertThat(e2b.pause(s.id(), false)).isTrue();
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.PAUSED);
      LiveSandbox resumed = e2b.connect(s.id());
      assertThat(resumed.readFile("/home/user/kept.txt")).isEqualTo("kept");
      assertThat(alive(resumed, pid)).isFalse();
    }
  }

  @Test
  @DisplayName("onTimeout PAUSE: at the deadline the sandbox is paused, not killed, and resumes with its process")
  void pauseAtDeadline(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(2)).withOnTimeout(OnTimeout.PAUSE))) {
      String pid = startSleeper(s);
      s.setTimeout(Duration.ofSeconds(1));
      await().atMost(Duration.ofSeconds(20)).until(() -> e2b.info(s.id()).state() == SandboxState.PAUSED);
      LiveSandbox resumed = e2b.connect(s.id(), Duration.ofMinutes(2));
      assertThat(alive(resumed, pid)).isTrue();
      assertThat(e2b.info(s.id()).endAt()).isAfter(java.time.Instant.now().plusSeconds(60));
    }
  }

  @Test
  @DisplayName("autoResume: a call to a paused sandbox's daemon resumes it")
  void autoResume(E2BApi e2b) {
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(2))
        .withOnTimeout(OnTimeout.PAUSE).withAutoResume(true))) {
      assertThat(s.info().lifecycle()).as("the lifecycle as the server reports it").isEqualTo(new SandboxLifecycle(true, true));
      s.setTimeout(Duration.ofSeconds(1));
      await().atMost(Duration.ofSeconds(20)).until(() -> e2b.info(s.id()).state() == SandboxState.PAUSED);
      assertThat(s.exec("echo awake").stdout()).isEqualTo("awake\n");
      assertThat(e2b.info(s.id()).state()).isEqualTo(SandboxState.RUNNING);
    }
  }

  @Test
  @DisplayName("a paused sandbox can be killed")
  void killPaused(E2BApi e2b) {
    LiveSandbox s = e2b.create();
    assertThat(s.pause()).isTrue();
    assertThat(e2b.kill(s.id())).isTrue();
    assertThatThrownBy(() -> e2b.info(s.id())).isInstanceOf(SandboxNotFoundException.class);
  }

  @Test
  @DisplayName("the deprecated resume path answers 201 for a paused sandbox and 409 for a running one")
  void deprecatedResume(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpRequest resume = HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + s.id() + "/resume"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"timeout\":60}")).build();
      HttpResponse<String> running = http.send(resume, HttpResponse.BodyHandlers.ofString());
      assertThat(running.statusCode()).isEqualTo(409);
      assertThat(running.body()).contains("\"code\":409");
      s.pause();
      HttpResponse<String> resumed = http.send(resume, HttpResponse.BodyHandlers.ofString());
      assertThat(resumed.statusCode()).isEqualTo(201);
      assertThat(resumed.body()).contains(s.id());
      HttpRequest connect = HttpRequest.newBuilder(server.apiUrl().resolve("/v2/sandboxes/" + s.id() + "/connect"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
      assertThat(http.send(connect, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      s.pause();
      assertThat(http.send(connect, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(201);
    }
  }

  @Test
  @DisplayName("killing a sandbox while a command runs breaks the command's stream, as E2B's does: the client says the sandbox was killed, within seconds, and never reports an exit")
  void killDuringCommand(E2BApi e2b) throws Exception {
    LiveSandbox s = e2b.create();
    java.util.concurrent.CompletableFuture<Object> outcome = new java.util.concurrent.CompletableFuture<>();
    Thread.ofVirtual().start(() -> {
      try {
        outcome.complete(s.exec("echo started; sleep 60; echo finished"));
      } catch (RuntimeException e) {
        outcome.complete(e);
      }
    });
    // the command is running (its shell is in the process list) before the kill
    await().atMost(Duration.ofSeconds(20)).until(() -> e2b.connect(s.id()).exec("pgrep -f 'sleep 60' || true").stdout().strip().length() > 0);
    long killed = System.nanoTime();
    assertThat(e2b.kill(s.id())).isTrue();
    Object result = outcome.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - killed)).isLessThan(Duration.ofSeconds(15));
    assertThat(result).as("an exit nobody observed is not reported").isInstanceOf(SandboxNotFoundException.class);
    assertThat(((SandboxNotFoundException) result).getMessage()).contains(s.id()).contains("killed or reached its end of life while the command was running");
  }

  @Test
  @DisplayName("on the wire, a process stream into a sandbox that is killed breaks off: no end event, no end-of-stream message")
  void killBreaksTheWireStream(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox s = e2b.create();
    String token = Tokens.envdToken(server, s.id());
    byte[] start = "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo up; sleep 60\"]}}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    HttpRequest req = HttpRequest.newBuilder(server.sandboxUrl().resolve("/process.Process/Start"))
        .header("Content-Type", "application/connect+json").header("E2b-Sandbox-Id", s.id()).header("E2b-Sandbox-Port", "49983")
        .header("X-Access-Token", token).header("Authorization", "Basic cm9vdDo=")
        .POST(HttpRequest.BodyPublishers.ofByteArray(io.sandboxes.e2b.internal.Connect.envelope(0, start))).build();
    HttpResponse<java.io.InputStream> resp = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofInputStream());
    assertThat(resp.statusCode()).isEqualTo(200);
    java.util.List<String> messages = new java.util.ArrayList<>();
    try (java.io.InputStream body = resp.body()) {
      // read until "up" has come, then kill, then read what is left
      io.sandboxes.e2b.internal.Connect.Envelope env;
      while (true) {
        env = io.sandboxes.e2b.internal.Connect.read(body);
        assertThat(env).isNotNull();
        String json = new String(env.payload(), java.nio.charset.StandardCharsets.UTF_8);
        messages.add(json);
        if (json.contains("\"stdout\"")) {
          break;
        }
      }
      assertThat(e2b.kill(s.id())).isTrue();
      java.util.concurrent.CompletableFuture<String> rest = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        try {
          while (true) {
            io.sandboxes.e2b.internal.Connect.Envelope more = io.sandboxes.e2b.internal.Connect.read(body);
            if (more == null) {
              return "clean end of body";
            }
            messages.add(new String(more.payload(), java.nio.charset.StandardCharsets.UTF_8));
            if (more.endStream()) {
              return "end-of-stream message";
            }
          }
        } catch (java.io.IOException e) {
          return "broke: " + e;
        }
      });
      assertThat(rest.get(10, java.util.concurrent.TimeUnit.SECONDS)).startsWith("broke");
    }
    assertThat(messages).noneMatch(m -> m.contains("\"end\""));
  }
}
