package io.sandboxes.local.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.ServerAccess;
import io.sandboxes.local.SharedServer;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A flood of requests to a paused sandbox's port: one resume, however many ask; while it is under
 * way (held here by holding the sandbox's transition lock, as a slow resume holds it) at most
 * {@link TrafficWake#MAX_WAITING} requests wait for it and every one beyond is answered 503 at
 * once, so the flood holds a bounded share of the server; the waiting ones are answered by the
 * sandbox's service once it runs.
 */
@ExtendWith(SharedServer.class)
class TrafficFloodTest {
  private static final int PORT = 8000;

  private static HttpRequest toPort(LocalServer server, String id, Duration timeout) {
    return HttpRequest.newBuilder(server.sandboxUrl().resolve("/hello.txt")).timeout(timeout)
        .header("E2b-Sandbox-Id", id).header("E2b-Sandbox-Port", Integer.toString(PORT)).GET().build();
  }

  @Test
  @DisplayName("a flood to a paused autoResume sandbox's port: one resume; 64 wait for it, the rest are 503 at once; the waiting ones get the service's answer")
  void floodWakesOnceAndWaitsBounded(E2BApi e2b, LocalServer server) throws Exception {
    Registry registry = ServerAccess.registry(server);
    try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(3)).withOnTimeout(OnTimeout.PAUSE)
            .withAutoResume(true));
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      String id = s.id();
      s.writeFile("/home/user/site/hello.txt", "hello\n");
      s.exec("cd /home/user/site && (nohup python3 -m http.server " + PORT + " --bind 127.0.0.1 >/dev/null 2>&1 &)").orThrow();
      await().atMost(Duration.ofSeconds(30))
          .until(() -> http.send(toPort(server, id, Duration.ofSeconds(10)), HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
      assertThat(s.pause()).isTrue();
      LocalSandbox sandbox = registry.find(id).orElseThrow();

      List<CompletableFuture<HttpResponse<String>>> first = new ArrayList<>();
      sandbox.transitions.lock();
      try {
        for (int i = 0; i <= TrafficWake.MAX_WAITING; i++) { // one resumes (and waits for the lock), the rest wait for it
          first.add(http.sendAsync(toPort(server, id, Duration.ofSeconds(90)), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> registry.trafficWake().waiting(id) == TrafficWake.MAX_WAITING);
        for (int i = 0; i < 20; i++) {
          // a wait here would never end while this thread holds the lock: the request's own timeout would say so
          HttpResponse<String> refused = http.send(toPort(server, id, Duration.ofSeconds(20)), HttpResponse.BodyHandlers.ofString());
          assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
          assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
          assertThat(refused.body()).contains("is resuming").contains("\"code\":503");
        }
        assertThat(registry.trafficWake().waiting(id)).isEqualTo(TrafficWake.MAX_WAITING);
        assertThat(first).noneMatch(CompletableFuture::isDone);
      } finally {
        sandbox.transitions.unlock();
      }
      for (CompletableFuture<HttpResponse<String>> f : first) {
        HttpResponse<String> r = f.get();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("hello\n");
      }
      assertThat(registry.trafficWake().waiting(id)).isZero();
      assertThat(sandbox.logLines().stream().filter(l -> l.message().startsWith("resumed")).count()).as("resumes").isEqualTo(1);
      assertThat(e2b.info(id).state()).isEqualTo(SandboxState.RUNNING);
    }
  }
}
