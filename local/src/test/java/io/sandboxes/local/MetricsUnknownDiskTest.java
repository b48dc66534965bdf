package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.ExecOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A sandbox whose disk use cannot be read (its {@code df} answers nothing: code in the sandbox is
 * root and can replace it) has no disk figures, never a disk of 0 bytes: the sampler takes no
 * sample without them, and a metrics request that needs a fresh one answers unavailable.
 */
@ExtendWith(SharedServer.class)
class MetricsUnknownDiskTest {

  @Test
  @DisplayName("df that answers nothing: no sample reports a 0-byte disk, and a fresh reading is refused as unavailable")
  void unreadableDisk(E2BApi e2b, LocalServer server) throws Exception {
    try (LiveSandbox s = e2b.create(); HttpClient http = HttpClient.newHttpClient()) {
      // every df on the PATH prints nothing and fails
      s.exec("for f in $(which -a df); do printf '#!/bin/sh\\nexit 1\\n' > \"$f\"; done; df /; echo $?",
          ExecOptions.defaults().withUser("root"));
      HttpRequest get = HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + s.id() + "/metrics"))
          .header("X-API-KEY", server.apiKey()).GET().build();
      // the sampler keeps its last disk figures for 30 s, then reads df again; a request reads it
      // itself once the newest sample is 5 s old: within a minute, a reading of the broken df is asked for
      HttpResponse<String> seen = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(2))
          .until(() -> http.send(get, HttpResponse.BodyHandlers.ofString()),
              a -> a.statusCode() != 200 || zeroDisk(a.body()));
      assertThat(seen.statusCode()).as(seen.body()).isEqualTo(503);
      JsonNode error = Json.parse(seen.body().getBytes(StandardCharsets.UTF_8));
      assertThat(error.path("message").asText()).isEqualTo("disk use of sandbox " + s.id()
          + " could not be read: df in the sandbox gave no reading of its disk (exit code 1)");
    }
  }

  private static boolean zeroDisk(String body) throws java.io.UncheckedIOException {
    JsonNode samples;
    try {
      samples = Json.parse(body.getBytes(StandardCharsets.UTF_8));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    for (JsonNode m : samples) {
      if (m.path("diskTotal").asLong(-1) == 0) {
        return true;
      }
    }
    return false;
  }
}
