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
      String api = postChunkedOversized(server.apiUrl(), "/sandboxes", "X-API-KEY: " + server.apiKey());
      assertThat(api).startsWith("HTTP/1.1 413").contains("larger than 1048576 bytes");

      String envd = postChunkedOversized(server.sandboxUrl(), "/filesystem.Filesystem/Stat",
          "E2b-Sandbox-Id: " + sandbox.id() + "\r\nX-Access-Token: " + Tokens.envdToken(server, sandbox.id()));
      assertThat(envd).startsWith("HTTP/1.1 413");
      // a body under the bound is still read and answered on its merits
      HttpResponse<String> small = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes"))
          .header("X-API-KEY", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(small.statusCode()).isEqualTo(400);
      assertThat(small.body()).contains("not valid JSON");
    }
  }

  /**
   * POSTs {@link #oversized()} chunked, from a thread of its own, and reads the answer on this one:
   * the server answers before the body ends and closes without reading the rest, so the writing
   * side fails, which must not hide the answer (java.net.http's client once reported that write
   * failure instead of the 413 it had been sent). Returns the status line, headers and body.
   */
  private static String postChunkedOversized(URI base, String path, String headers) throws Exception {
    try (Socket s = new Socket(base.getHost(), base.getPort())) {
      s.setSoTimeout(30_000); // a server that waits for the whole body would leave this read hanging
      OutputStream out = s.getOutputStream();
      Thread writer = Thread.ofVirtual().start(() -> {
        try (InputStream body = oversized()) {
          out.write(("POST " + path + " HTTP/1.1\r\nHost: " + base.getHost() + "\r\n" + headers
              + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
          byte[] chunk;
          while ((chunk = body.readNBytes(64 * 1024)).length > 0) {
            out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(chunk);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          }
          out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
        } catch (java.io.IOException refused) {
          // the server closed after answering: expected once it has refused the body
        }
      });
      java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
      try {
        InputStream in = s.getInputStream();
        byte[] buf = new byte[8192];
        int n;
        while ((n = in.read(buf)) > 0) {
          got.write(buf, 0, n);
        }
      } catch (java.net.SocketException reset) {
        // closing with the body's rest unread resets the connection; the answer came before that
        if (got.size() == 0) {
          throw new AssertionError("the connection was reset before any answer came", reset);
        }
      } finally {
        s.close();
        writer.join();
      }
      return got.toString(StandardCharsets.ISO_8859_1);
    }
  }

  /** 2 MiB of a JSON string's inside, with no length given. */
  private static InputStream oversized() {
    byte[] head = "{\"templateID\":\"".getBytes(StandardCharsets.US_ASCII);
    return new java.io.SequenceInputStream(new java.io.ByteArrayInputStream(head),
        new java.io.ByteArrayInputStream("a".repeat(2 << 20).getBytes(StandardCharsets.US_ASCII)));
  }
}
