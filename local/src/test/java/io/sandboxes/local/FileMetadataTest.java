package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * envd's file metadata and its full-disk answer on {@code POST /files}, spoken as the official
 * SDKs speak them: {@code X-Metadata-<key>} headers stored with the file (keys lowercased, the
 * first of a repeated header, replaced by every upload, cleared by one without any), returned by
 * Stat and ListDir; a write the sandbox's disk cannot hold answers 507.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FileMetadataTest {
  private LiveSandbox sandbox;
  private Http http;
  private Envd envd;
  private HttpClient client;
  private URI sandboxUrl;
  private String token;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    sandbox = e2b.create();
    http = new Http(Duration.ofSeconds(30));
    token = Tokens.envdToken(server, sandbox.id());
    sandboxUrl = server.sandboxUrl();
    envd = new Envd(http, sandboxUrl, sandbox.id(), token);
    client = HttpClient.newHttpClient();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
    if (http != null) {
      http.close();
    }
    if (client != null) {
      client.close();
    }
  }

  private HttpResponse<String> upload(String path, byte[] body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(sandboxUrl.resolve("/files?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8)))
        .header(Envd.SANDBOX_ID_HEADER, sandbox.id())
        .header(Envd.ACCESS_TOKEN_HEADER, token)
        .header("Content-Type", "application/octet-stream")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode stat(String path) {
    return envd.unary("filesystem.Filesystem/Stat", Json.object().put("path", path), null, "stat").path("entry");
  }

  @Test
  @DisplayName("X-Metadata-* headers are stored with the file, returned by the upload, Stat and ListDir, replaced and cleared by later uploads")
  void metadataRoundTrip() throws Exception {
    HttpResponse<String> first = upload("/home/user/meta/a.txt", "one".getBytes(StandardCharsets.UTF_8),
        "X-Metadata-Owner", "Alice Smith", "X-Metadata-Build-Id", "42");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(Json.parse(first.body().getBytes(StandardCharsets.UTF_8)).get(0).path("metadata")).isEqualTo(Json.toObject(Map.of("owner", "Alice Smith", "build-id", "42")));
    assertThat(stat("/home/user/meta/a.txt").path("metadata")).isEqualTo(Json.toObject(Map.of("owner", "Alice Smith", "build-id", "42")));
    JsonNode listed = envd.unary("filesystem.Filesystem/ListDir", Json.object().put("path", "/home/user/meta").put("depth", 1), null, "ls");
    assertThat(listed.path("entries").get(0).path("metadata").path("owner").asText()).isEqualTo("Alice Smith");
    assertThat(sandbox.readFile("/home/user/meta/a.txt")).isEqualTo("one");

    // the next upload's set replaces the old one; a key it does not send is gone
    assertThat(upload("/home/user/meta/a.txt", "two".getBytes(StandardCharsets.UTF_8), "X-Metadata-Stage", "b").statusCode()).isEqualTo(200);
    assertThat(stat("/home/user/meta/a.txt").path("metadata")).isEqualTo(Json.toObject(Map.of("stage", "b")));
    // an upload without any clears it
    assertThat(upload("/home/user/meta/a.txt", "three".getBytes(StandardCharsets.UTF_8)).statusCode()).isEqualTo(200);
    assertThat(stat("/home/user/meta/a.txt").has("metadata")).isFalse();
    assertThat(sandbox.readFile("/home/user/meta/a.txt")).isEqualTo("three");
  }

  @Test
  @DisplayName("metadata that is not printable ASCII, or a key past 246 bytes, is a 400 and writes nothing")
  void badMetadata() throws Exception {
    HttpResponse<String> longKey = upload("/home/user/meta/bad.txt", new byte[] {1}, "X-Metadata-" + "k".repeat(247), "v");
    assertThat(longKey.statusCode()).isEqualTo(400);
    assertThat(longKey.body()).contains("longer than 246");
    HttpResponse<String> tooMuch = upload("/home/user/meta/bad.txt", new byte[] {1},
        "X-Metadata-A", "x".repeat(2100), "X-Metadata-B", "y".repeat(2100));
    assertThat(tooMuch.statusCode()).isEqualTo(400);
    assertThat(sandbox.exec("test -e /home/user/meta/bad.txt").exitCode()).isEqualTo(1);
  }

  @Test
  @DisplayName("a write the sandbox's disk cannot hold answers 507, and leaves no partial file at the target")
  void fullDisk() throws Exception {
    // /dev/shm is the container's own 64 MiB tmpfs: filled to its last MiB, 4 MiB cannot fit (and
    // an upload that small is all sent before the answer, so the 507 is never lost to a reset)
    assertThat(sandbox.exec("head -c 63M /dev/zero > /dev/shm/fill").exitCode()).isZero();
    HttpResponse<String> full = upload("/dev/shm/big.bin", new byte[4 << 20]);
    assertThat(full.statusCode()).as(full.body()).isEqualTo(507);
    assertThat(full.body()).contains("no space");
    assertThat(sandbox.exec("rm /dev/shm/fill; ls -A /dev/shm").stdout()).isEmpty();
  }

  @Test
  @DisplayName("issue 24 item 7: the client throws a full disk's 507 as SandboxNotEnoughSpaceException, status and server's reason kept")
  void fullDiskTyped() {
    assertThat(sandbox.exec("head -c 63M /dev/zero > /dev/shm/fill2").exitCode()).isZero();
    try {
      // several rounds, each a body 6 MiB long of which the sandbox takes about 1: a server that answers
      // and closes while the body still arrives has the connection reset, and the client loses the 507
      for (int round = 0; round < 8; round++) {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> sandbox.writeBytes("/dev/shm/big2.bin", new byte[6 << 20]))
            .as("round %d", round)
            .isInstanceOfSatisfying(io.sandboxes.SandboxNotEnoughSpaceException.class, e -> {
              assertThat(e.statusCode()).isEqualTo(507);
              assertThat(e.serverMessage()).contains("no space");
            })
            .hasMessageContaining("/dev/shm/big2.bin");
      }
    } finally {
      sandbox.exec("rm -f /dev/shm/fill2 /dev/shm/big2.bin");
    }
  }
}
