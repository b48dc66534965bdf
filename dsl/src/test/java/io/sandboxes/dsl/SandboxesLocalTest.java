package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SandboxesLocalTest {

  @Test
  @DisplayName("Sandboxes.local() finds the local runtime, serves sandboxes, and stops the server when closed")
  void localRoundTrip() throws Exception {
    URI api;
    try (SandboxClient sandboxes = Sandboxes.local()) {
      api = sandboxes.provider().apiUrl();
      assertThat(api.getHost()).isEqualTo("127.0.0.1");
      try (Sandbox sandbox = sandboxes.create()) {
        assertThat(sandbox.exec("python3 -c 'print(6 * 7)'").stdout()).isEqualTo("42\n");
        // a preview URL of the local runtime is a loopback address forwarded into the sandbox
        sandbox.writeFile("/home/user/site/index.html", "<h1>preview</h1>");
        sandbox.exec("cd /home/user/site && (nohup python3 -m http.server 5173 >/dev/null 2>&1 &)").orThrow();
        URI preview = URI.create(sandbox.previewUrl());
        assertThat(preview.toString()).matches("http://127\\.0\\.0\\.1:\\d+").isEqualTo(sandbox.previewUrl(5173));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).ignoreExceptions()
            .until(() -> body(preview.resolve("/index.html")).equals("<h1>preview</h1>"));
        // a fork by id, as E2B's static Sandbox.fork: the parent's files under a new id
        java.util.List<io.sandboxes.e2b.ForkResult> forks = sandboxes.fork(sandbox.id(), 1, java.time.Duration.ofSeconds(60));
        assertThat(forks).hasSize(1);
        try (Sandbox fork = forks.get(0).orThrow()) {
          assertThat(fork.id()).isNotEqualTo(sandbox.id());
          assertThat(fork.readFile("/home/user/site/index.html")).isEqualTo("<h1>preview</h1>");
        }
      }
      assertThat(status(api.resolve("/health"))).isEqualTo(204);
      // the local runtime's own witnesses are what verification probes: deny-by-default is observed
      assertThat(sandboxes.verifyEgress().state()).isEqualTo(io.sandboxes.EgressVerdict.State.FILTERED);
    }
    assertThatThrownBy(() -> status(api.resolve("/health"))).isInstanceOf(java.io.IOException.class);
  }

  @Test
  @DisplayName("Sandboxes.at() refuses missing arguments by name")
  void atValidates() {
    assertThatThrownBy(() -> Sandboxes.at(null, URI.create("http://127.0.0.1:1"), "k")).hasMessageContaining("apiUrl");
    assertThatThrownBy(() -> Sandboxes.at(URI.create("http://127.0.0.1:1"), URI.create("http://127.0.0.1:2"), " "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("apiKey");
  }

  @Test
  @DisplayName("Sandboxes.e2b() without a key fails on first use with a message naming E2B_API_KEY, not at construction")
  void e2bWithoutKey() {
    // Sandboxes.e2b() is Sandboxes.e2b(System.getenv()); an empty environment stands for a machine without E2B_API_KEY
    try (SandboxClient client = Sandboxes.e2b(java.util.Map.of())) {
      E2BSandboxProvider p = client.provider();
      assertThat(p.apiUrl()).isEqualTo(URI.create("https://api.e2b.app"));
      assertThatThrownBy(client::create).isInstanceOf(SandboxException.class)
          .hasMessage("E2B provider requires an API key (config.apiKey or E2B_API_KEY)");
      assertThatThrownBy(client::list).isInstanceOf(SandboxException.class).hasMessageContaining("E2B_API_KEY");
    }
  }

  @Test
  @DisplayName("Sandboxes.e2b(configure) builds the provider the function configured, and refuses a null builder")
  void e2bConfigured() {
    try (HttpClient own = HttpClient.newHttpClient()) {
      try (SandboxClient c = Sandboxes.e2b(b -> b.environment(java.util.Map.of("E2B_API_KEY", "k")).domain("example.test")
          .httpClient(own))) {
        assertThat(c.provider().apiUrl()).isEqualTo(URI.create("https://api.example.test"));
      }
      assertThat(own.isTerminated()).as("a client the provider was given stays open").isFalse();
    }
    assertThatThrownBy(() -> Sandboxes.e2b(b -> null)).isInstanceOf(NullPointerException.class).hasMessageContaining("configure");
  }

  @Test
  @DisplayName("unavailableReason: a key is enough; without one it names the missing local runtime, or is empty when Docker is here")
  void unavailableReason() {
    java.util.function.Supplier<java.util.Optional<io.sandboxes.spi.LocalRuntime>> none = java.util.Optional::empty;
    assertThat(Sandboxes.unavailableReason(name -> name.equals("E2B_API_KEY") ? "e2b_key" : null, none)).isEmpty();
    assertThat(Sandboxes.unavailableReason(name -> name.equals("E2B_API_KEY") ? "  " : null, none)).get().asString()
        .contains("E2B_API_KEY is not set").contains("io.sandboxes:sandboxes-local");
    // the real local runtime, found on the class path, with the Docker engine these tests run on
    assertThat(Sandboxes.unavailableReason(name -> null,
        () -> java.util.ServiceLoader.load(io.sandboxes.spi.LocalRuntime.class).findFirst())).isEmpty();
  }

  private static String body(URI uri) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }
  }

  private static int status(URI uri) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
  }
}
