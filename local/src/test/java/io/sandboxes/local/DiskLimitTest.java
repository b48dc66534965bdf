package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A sandbox's disk limit on a real server with a small one (64 MB): a sandbox that writes past it
 * is stopped and later calls say why; one within it is untouched, whatever it does to steer the
 * measurement (a link to the host's root, many hard links to one file, a huge sparse file). Never
 * writes more than about 200 MB to the host's disk.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DiskLimitTest {
  private static final int LIMIT_MB = 64;
  private LocalServer server;
  private E2BSandboxProvider provider;
  private HttpClient http;

  @BeforeAll
  void start() throws Exception {
    Path state = Files.createTempDirectory("sandboxes-disktest-state-");
    server = LocalServer.builder().stateDir(state).diskSizeMB(LIMIT_MB).build().start();
    provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
        .apiKey(server.apiKey()).build();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    if (provider != null) {
      provider.close();
    }
    if (server != null) {
      server.close();
    }
    if (http != null) {
      http.close();
    }
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey()).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Runs a command that may outlive its sandbox: its outcome does not matter, what it left does. */
  private static void runAndIgnore(LiveSandbox s, String cmd) {
    try {
      s.exec(cmd);
    } catch (RuntimeException e) {
      // the sandbox was stopped while it ran
    }
  }

  @Test
  @DisplayName("the mechanism matches the storage driver: on overlay2 over ext4 the layer is measured, not a quota")
  void mechanismMatchesTheDriver() {
    try (DockerRuntime docker = DockerRuntime.connect()) {
      var info = docker.client().infoCmd().exec();
      List<List<String>> status = info.getDriverStatuses() == null ? List.of() : info.getDriverStatuses();
      boolean overlayOnExt4 = "overlay2".equals(info.getDriver())
          && status.stream().anyMatch(kv -> kv.size() == 2 && kv.get(0).equals("Backing Filesystem") && kv.get(1).equals("extfs"));
      if (overlayOnExt4) {
        assertThat(server.diskLimitMechanism()).isIn("measured-blocks", "measured-size-rw");
      } else {
        assertThat(server.diskLimitMechanism()).isIn("quota", "measured-blocks", "measured-size-rw");
      }
    }
  }

  @Test
  @DisplayName("a sandbox that writes 200 MB past its 64 MB limit is stopped, and calls for it say why; one within its limit is untouched")
  void pastItsLimitIsStopped() throws Exception {
    assumeThat(server.diskLimitMechanism()).as("a quota makes the sandbox's disk full instead").isEqualTo("measured-blocks");
    LiveSandbox within = provider.api().create();
    LiveSandbox hog = provider.api().create();
    try {
      JsonNode info = Json.parse(get("/sandboxes/" + hog.id()).body().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      assertThat(info.path("diskSizeMB").asInt()).isEqualTo(LIMIT_MB);
      String token = Tokens.envdToken(server, hog.id());

      // within its limit, whatever it does to steer the count: each of these would pass 64 MB if counted naively
      assertThat(within.exec("head -c 16M /dev/urandom > /home/user/data && for i in $(seq 1 40); do ln /home/user/data /home/user/link$i; done"
          + " && ln -s / /home/user/host-root && truncate -s 20G /home/user/sparse && echo ok").stdout()).isEqualTo("ok\n");

      runAndIgnore(hog, "dd if=/dev/zero of=/home/user/fill bs=1M count=200 conv=fsync 2>/dev/null; echo done");
      String expected = "stopped: its writable layer passed its disk limit of " + LIMIT_MB + " MB";
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
          .until(() -> get("/sandboxes/" + hog.id()), r -> r.statusCode() == 404);
      assertThat(get("/sandboxes/" + hog.id()).body()).contains(expected);
      HttpResponse<String> envd = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/files?path=/home/user/fill"))
          .header(Envd.SANDBOX_ID_HEADER, hog.id()).header(Envd.ACCESS_TOKEN_HEADER, token).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(envd.statusCode()).isEqualTo(502);
      assertThat(envd.body()).contains(expected);
      try (DockerRuntime docker = DockerRuntime.connect()) { // its container, and the layer it filled, are removed
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).until(() -> docker.listOurs().stream()
            .noneMatch(c -> hog.id().equals(c.getLabels().get(DockerRuntime.LABEL_SANDBOX_ID))));
      }

      // the one within its limit lives on through more measurements
      await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofSeconds(1))
          .until(() -> get("/sandboxes/" + within.id()).statusCode() == 200);
      assertThat(within.exec("cat /home/user/data | wc -c").stdout().strip()).isEqualTo(Integer.toString(16 << 20));
    } finally {
      within.close();
      runAndIgnore(hog, "true");
      provider.api().kill(hog.id());
    }
  }

  @Test
  @DisplayName("a sandbox that makes more files than its limit allows (one per 16 KiB) is stopped, though they hold no bytes")
  void tooManyFilesIsStopped() throws Exception {
    assumeThat(server.diskLimitMechanism()).as("only block measurement counts files").isEqualTo("measured-blocks");
    LiveSandbox many = provider.api().create();
    try {
      runAndIgnore(many, "mkdir -p /home/user/many && cd /home/user/many && seq 1 6000 | xargs touch; echo done");
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
          .until(() -> get("/sandboxes/" + many.id()), r -> r.statusCode() == 404);
      assertThat(get("/sandboxes/" + many.id()).body())
          .contains("stopped: its writable layer passed its limit of " + LIMIT_MB * 64 + " files and folders");
    } finally {
      provider.api().kill(many.id());
    }
  }
}
