package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A request refused after its handler asked for the body but before reading it (an upload to a
 * spent link) is answered with {@code Connection: close}: its connection holds the unread body,
 * and a client that sent its next request there would get no answer at all (seen in CI as
 * "header parser received no bytes" on the build that followed the uploads).
 */
@ExtendWith(SharedServer.class)
class UploadRefusalTest {

  @Test
  @DisplayName("an upload to a spent link is refused with Connection: close, and its body left unread does not poison the connection")
  void spentLinkClosesTheConnection(LocalServer server) throws Exception {
    byte[] tar = TemplateBuildTest.gzippedTar("a.txt", "a");
    TemplateBuildTest.Requested r = TemplateBuildTest.request(server, TemplateBuildTest.unique("tpl-spent"));
    TemplateBuildTest.Answer link = TemplateBuildTest.call(server, "GET", "/templates/" + r.templateId() + "/files/"
        + TemplateBuildTest.sha256(tar), null);
    URI url = URI.create(link.body().path("url").asText());
    try (HttpClient http = HttpClient.newHttpClient()) {
      assertThat(http.send(HttpRequest.newBuilder(url).PUT(HttpRequest.BodyPublishers.ofByteArray(tar)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(200);
    }
    byte[] body = new byte[32 * 1024];
    try (Socket s = new Socket(url.getHost(), url.getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(("PUT " + url.getRawPath() + "?" + url.getRawQuery() + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
          + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      s.setSoTimeout(30_000);
      InputStream in = s.getInputStream();
      StringBuilder b = new StringBuilder();
      int c;
      while (b.indexOf("\r\n\r\n") < 0 && (c = in.read()) >= 0) {
        b.append((char) c);
      }
      String head = b.toString();
      assertThat(head).startsWith("HTTP/1.1 401");
      assertThat(head.toLowerCase(java.util.Locale.ROOT)).as(head).contains("connection: close");
    }
  }
}
