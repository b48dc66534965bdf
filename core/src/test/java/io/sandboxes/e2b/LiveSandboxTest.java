package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class LiveSandboxTest {

  private static JsonNode json(String s) throws IOException {
    return Json.parse(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("envd's end event: omitted exitCode is 0 only for a process that exited; a signal is -1, never 0")
  void exitCodes() throws IOException {
    assertThat(Processes.exitCode(json("{\"exited\":true,\"status\":\"exit status 0\"}"))).isZero();
    assertThat(Processes.exitCode(json("{\"exitCode\":3,\"exited\":true}"))).isEqualTo(3);
    assertThat(Processes.exitCode(json("{\"exitCode\":-1,\"status\":\"signal: killed\"}"))).isEqualTo(-1);
    assertThat(Processes.exitCode(json("{\"status\":\"unknown\"}"))).isEqualTo(-1);
  }

  @Test
  @DisplayName("configuration: builder beats environment, environment beats E2B's defaults")
  void configurationPrecedence() {
    Map<String, String> env = Map.of("E2B_API_URL", "http://127.0.0.1:3000", "E2B_SANDBOX_URL", "http://127.0.0.1:49983",
        "E2B_API_KEY", "e2b_1");
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(env).build()) {
      assertThat(p.apiUrl()).isEqualTo(URI.create("http://127.0.0.1:3000"));
      assertThat(p.sandboxUrl()).contains(URI.create("http://127.0.0.1:49983"));
    }
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(Map.of("E2B_DOMAIN", "example.test")).build()) {
      assertThat(p.apiUrl()).isEqualTo(URI.create("https://api.example.test"));
      assertThat(p.sandboxUrl()).isEmpty();
    }
    try (E2BSandboxProvider p = E2BSandboxProvider.builder().environment(env).apiUrl(URI.create("http://127.0.0.1:9")).build()) {
      assertThat(p.apiUrl()).isEqualTo(URI.create("http://127.0.0.1:9"));
    }
  }

  @Test
  @DisplayName("bad configuration fails at the setter, naming the parameter")
  void badConfiguration() {
    assertThatThrownBy(() -> E2BSandboxProvider.builder().apiUrl(URI.create("relative/path")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("apiUrl");
    assertThatThrownBy(() -> E2BSandboxProvider.builder().environment(Map.of("E2B_API_URL", "::nonsense")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("E2B_API_URL");
    assertThatThrownBy(() -> E2BSandboxProvider.builder().requestTimeout(java.time.Duration.ofSeconds(-1)))
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(() -> E2BSandboxProvider.builder().domain("https://e2b.app")).hasMessageContaining("domain");
  }

  @Test
  @DisplayName("a closed provider refuses further calls")
  void closedProvider() {
    E2BSandboxProvider p = E2BSandboxProvider.builder().environment(Map.of("E2B_API_KEY", "k")).build();
    p.close();
    p.close();
    assertThatThrownBy(() -> p.api().create()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }
}
