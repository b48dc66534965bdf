package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What an idle exit counts as activity: a request being answered is, however long it takes, so
 * {@code serve --idle-exit} never stops under a create that a loaded machine makes slow.
 */
class IdleActivityTest {

  @Test
  @DisplayName("a request still being answered keeps the server from idling; once it ends, the quiet time runs")
  void requestInFlightIsActivity() throws Exception {
    Duration quiet = Duration.ofSeconds(1);
    try (LocalServer server = TestRuntime.builder().warmPool(0).build().start();
        Socket s = new Socket(server.apiUrl().getHost(), server.apiUrl().getPort())) {
      await().atMost(Duration.ofSeconds(10)).until(() -> server.idleFor(quiet));
      OutputStream out = s.getOutputStream();
      byte[] body = "{\"templateID\":\"no-such-template\"}".getBytes(StandardCharsets.US_ASCII);
      out.write(("POST /sandboxes HTTP/1.1\r\nHost: localhost\r\nX-API-Key: " + server.apiKey()
          + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(body, 0, 1);
      out.flush();
      // the body trickles in, a byte each 100 ms, for three times the quiet time: the request is being answered all along
      assertThat(body.length).isGreaterThan(30);
      for (int i = 1; i < body.length - 1; i++) {
        await().during(Duration.ofMillis(100)).atMost(Duration.ofSeconds(5)).until(() -> !server.idleFor(quiet));
        out.write(body, i, 1);
        out.flush();
      }
      out.write(body, body.length - 1, 1);
      out.flush();
      String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(status).startsWith("HTTP/1.1 4");
      await().atMost(Duration.ofSeconds(10)).until(() -> server.idleFor(quiet));
    }
  }
}
