package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import io.sandboxes.ExecOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A sandbox's disk figures come from its daemon ({@code statvfs}), never from a process the
 * container engine starts in it: on Docker 20.10 such an exec caught by a freeze (a pause, a
 * commit) between its creation and its start never starts, and every inspect and removal of that
 * container then waits behind it. The daemon is the sandbox's, so what it says is tested hostile
 * too: figures no disk has, no answer at all, and a daemon of the older protocol. Figures that
 * cannot be read are absent, never a disk of 0 bytes.
 */
@ExtendWith(SharedServer.class)
class MetricsDiskTest {
  private static final ExecOptions ROOT = ExecOptions.defaults().withUser("root");

  private static HttpRequest metrics(LocalServer server, String id) {
    return HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + id + "/metrics")).header("X-API-KEY", server.apiKey())
        .GET().build();
  }

  private static JsonNode json(String body) {
    try {
      return Json.parse(body.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Whether any sample in a metrics answer reports a disk of 0 bytes. */
  private static boolean zeroDisk(String body) {
    for (JsonNode m : json(body)) {
      if (m.path("diskTotal").asLong(-1) == 0) {
        return true;
      }
    }
    return false;
  }

  /** The exec actions Docker recorded for a container between two moments (whole seconds, both included). */
  private static List<String> execsOf(String container, Instant since, Instant until) throws InterruptedException {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (DockerRuntime docker = DockerRuntime.connect()) {
      ResultCallback.Adapter<Event> events = docker.client().eventsCmd().withSince(Long.toString(since.getEpochSecond()))
          .withUntil(Long.toString(until.getEpochSecond() + 1)).withContainerFilter(container)
          .exec(new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Event e) {
              if (e.getAction() != null && e.getAction().startsWith("exec_")) {
                seen.add(e.getAction());
              }
            }
          });
      assertThat(events.awaitCompletion(30, TimeUnit.SECONDS)).as("Docker's event history was read to its end").isTrue();
    }
    return seen;
  }

  @Test
  @DisplayName("every df in the sandbox broken: fresh samples still carry the disk df read before (size exact), and Docker saw no exec in the sandbox meanwhile")
  void noProcessIsStartedForTheDisk(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      String container = server.registry().find(s.id()).orElseThrow().instanceId();
      String[] df = s.exec("df -B1 --output=size,used /").stdout().strip().split("\n")[1].strip().split("\\s+");
      long size = Long.parseLong(df[0]);
      s.exec("for f in $(which -a df); do printf '#!/bin/sh\\nexit 1\\n' > \"$f\"; done", ROOT);
      Instant since = Instant.now();
      // the sampler adds one about every 5 s; a request takes one itself once the newest is 5 s old
      JsonNode[] after = new JsonNode[1];
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        HttpResponse<String> a = http.send(metrics(server, s.id()), HttpResponse.BodyHandlers.ofString());
        assertThat(a.statusCode()).as(a.body()).isEqualTo(200);
        after[0] = json(a.body());
        long fresh = 0;
        for (JsonNode m : after[0]) {
          if (Instant.parse(m.path("timestamp").asText()).isAfter(since.plusSeconds(1))) {
            fresh++;
          }
        }
        return fresh >= 2;
      });
      JsonNode last = after[0].get(after[0].size() - 1);
      assertThat(last.path("diskTotal").asLong()).isEqualTo(size);
      assertThat(last.path("diskUsed").asLong()).isPositive().isLessThanOrEqualTo(size);
      assertThat(execsOf(container, since, Instant.now())).as("execs Docker ran in the sandbox while it was sampled").isEmpty();
    }
  }

  @Test
  @DisplayName("a daemon reading a disk of 0 bytes: the metrics request is refused as unavailable, saying why, and no sample has a 0-byte disk")
  void figuresNoDiskHas(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      HostileDaemonTest.takeOver(server, s, "bad-disk", "");
      HttpResponse<String> seen = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1))
          .until(() -> http.send(metrics(server, s.id()), HttpResponse.BodyHandlers.ofString()),
              a -> a.statusCode() != 200 || zeroDisk(a.body()));
      assertThat(seen.statusCode()).as(seen.body()).isEqualTo(503);
      assertThat(json(seen.body()).path("message").asText()).isEqualTo("disk use of sandbox " + s.id()
          + " could not be read: the daemon read a file system of 0 bytes with 5 used and 0 available");
    }
  }

  @Test
  @DisplayName("a daemon that never answers: the metrics request is refused within 8 s (the disk read waits 2 s), and a kill meanwhile answers within 1.5 s")
  void silentDaemon(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      LocalSandbox local = server.registry().find(s.id()).orElseThrow();
      HostileDaemonTest.takeOver(server, s, "silent", "");
      long[] took = new long[1];
      HttpResponse<String> seen = await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(500)).until(() -> {
        long t0 = System.nanoTime();
        HttpResponse<String> a = http.send(metrics(server, s.id()), HttpResponse.BodyHandlers.ofString());
        took[0] = System.nanoTime() - t0;
        return a;
      }, a -> a.statusCode() != 200);
      assertThat(seen.statusCode()).as(seen.body()).isEqualTo(503);
      assertThat(json(seen.body()).path("message").asText()).contains("did not answer within 2 s");
      assertThat(Duration.ofNanos(took[0])).isLessThan(Duration.ofSeconds(8));

      // a request whose disk read now waits on the silent daemon holds nothing a kill needs
      CompletableFuture<HttpResponse<String>> stalled = http.sendAsync(metrics(server, s.id()), HttpResponse.BodyHandlers.ofString());
      java.lang.reflect.Field f = LocalSandbox.class.getDeclaredField("sampling");
      f.setAccessible(true);
      java.util.concurrent.locks.ReentrantLock sampling = (java.util.concurrent.locks.ReentrantLock) f.get(local);
      await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(sampling::isLocked);
      long t0 = System.nanoTime();
      assertThat(e2b.kill(s.id())).isTrue();
      // a kill that waited for the read would take most of its 2 s (2.02 s when the lock was held over it)
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("kill while a disk read waits").isLessThan(Duration.ofMillis(1500));
      // it answers too (the samples it had, or unavailable), rather than waiting on
      assertThat(stalled.get(10, TimeUnit.SECONDS).statusCode()).isIn(200, 503);
    }
  }

  @Test
  @DisplayName("a daemon of protocol 2 (an older server's, running on across a restart) is still served; its disk is unavailable, never asked for with a call it does not know")
  void olderDaemon(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      DaemonConnection fake = HostileDaemonTest.takeOver(server, s, "silent", "FAKE_PROTOCOL=2");
      assertThat(fake.hello().version()).isEqualTo(2);
      HttpResponse<String> seen = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1))
          .until(() -> http.send(metrics(server, s.id()), HttpResponse.BodyHandlers.ofString()), a -> a.statusCode() != 200);
      assertThat(seen.statusCode()).as(seen.body()).isEqualTo(503);
      assertThat(json(seen.body()).path("message").asText()).contains("speaks protocol 2");
      // the fake hangs up on a FILE_STATFS, as a real daemon of protocol 2 does on a type it does not know
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(fake::isOpen);
      assertThat(fake.closeReason()).isNull();
    }
  }
}
