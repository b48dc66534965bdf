package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 12 item 2: a JSON request body is bounded (1 MiB). One past the bound is answered 413
 * without the server reading the rest into memory: a declared length is refused before its body
 * arrives, an undeclared (chunked) one after the first byte too many.
 */
@ExtendWith(SharedServer.class)
class BodyLimitTest {

  @Test
  @DisplayName("a declared 200 MB JSON body is refused with 413 before the client has sent it")
  void declaredTooLarge(LocalServer server) throws Exception {
    URI api = server.apiUrl();
    try (Socket s = new Socket(api.getHost(), api.getPort())) {
      s.setSoTimeout(10_000); // a server that waits for the 200 MB would leave this read hanging
      OutputStream out = s.getOutputStream();
      out.write(("POST /sandboxes HTTP/1.1\r\nHost: " + api.getHost() + "\r\nX-API-KEY: " + server.apiKey()
          + "\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n{\"templateID\":\"").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      assertThat(in.readLine()).startsWith("HTTP/1.1 413");
      String header;
      boolean close = false;
      while ((header = in.readLine()) != null && !header.isEmpty()) {
        close |= header.equalsIgnoreCase("Connection: close");
      }
      assertThat(close).as("Connection: close on the 413").isTrue();
    }
  }

  @Test
  @DisplayName("an undeclared (chunked) body past 1 MiB is refused with 413, on the control plane and on envd's unary calls")
  void chunkedTooLarge(LocalServer server, io.sandboxes.e2b.E2BApi e2b) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient(); io.sandboxes.e2b.LiveSandbox sandbox = e2b.create()) {
      HttpResponse<String> api = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .timeout(Duration.ofSeconds(30))
          .POST(HttpRequest.BodyPublishers.ofInputStream(() -> oversized())).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(api.statusCode()).isEqualTo(413);
      assertThat(api.body()).contains("larger than 1048576 bytes");

      HttpResponse<String> envd = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/filesystem.Filesystem/Stat"))
          .header("Content-Type", "application/json").header("E2b-Sandbox-Id", sandbox.id())
          .header("X-Access-Token", Tokens.envdToken(server, sandbox.id()))
          .timeout(Duration.ofSeconds(30))
          .POST(HttpRequest.BodyPublishers.ofInputStream(() -> oversized())).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(envd.statusCode()).isEqualTo(413);
      // a body under the bound is still read and answered on its merits
      HttpResponse<String> small = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(small.statusCode()).isEqualTo(400);
      assertThat(small.body()).contains("not valid JSON");
    }
  }

  /** 2 MiB of a JSON string's inside, with no length given. */
  private static InputStream oversized() {
    byte[] head = "{\"templateID\":\"".getBytes(StandardCharsets.US_ASCII);
    return new java.io.SequenceInputStream(new java.io.ByteArrayInputStream(head),
        new java.io.ByteArrayInputStream("a".repeat(2 << 20).getBytes(StandardCharsets.US_ASCII)));
  }
}
