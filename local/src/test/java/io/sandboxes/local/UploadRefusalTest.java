package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
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
 * spent link): a body of up to 8 MiB is read and dropped, so the client, which may still be
 * sending it, reads the answer and may reuse the connection (closing a connection with a body
 * still arriving resets it, and the client loses the answer: "header parser received no bytes"
 * in CI, on the second upload of half a megabyte to a spent link). A larger one is answered with
 * {@code Connection: close}: its connection still holds the body, and a client that sent its
 * next request there would get no answer at all.
 */
@ExtendWith(SharedServer.class)
class UploadRefusalTest {

  private static URI spentLink(LocalServer server) throws Exception {
    byte[] tar = TemplateBuildTest.gzippedTar("a.txt", java.util.UUID.randomUUID().toString()); // files the server has not: it asks for them
    TemplateBuildTest.Requested r = TemplateBuildTest.request(server, TemplateBuildTest.unique("tpl-spent"));
    TemplateBuildTest.Answer link = TemplateBuildTest.call(server, "GET", "/templates/" + r.templateId() + "/files/"
        + TemplateBuildTest.sha256(tar), null);
    URI url = URI.create(link.body().path("url").asText());
    try (HttpClient http = HttpClient.newHttpClient()) {
      assertThat(http.send(HttpRequest.newBuilder(url).PUT(HttpRequest.BodyPublishers.ofByteArray(tar)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(200);
    }
    return url;
  }

  private static void put(OutputStream out, URI url, long length) throws IOException {
    out.write(("PUT " + url.getRawPath() + "?" + url.getRawQuery() + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
        + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
  }

  /** An answer's head, and its body (by its Content-Length). */
  private static String answer(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int c;
    while (b.indexOf("\r\n\r\n") < 0 && (c = in.read()) >= 0) {
      b.append((char) c);
    }
    String head = b.toString();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
    if (m.find()) {
      in.readNBytes(Integer.parseInt(m.group(1)));
    }
    return head;
  }

  @Test
  @DisplayName("half a megabyte to a spent link, sent whole: refused, its answer read, and the connection serves the next request")
  void spentLinkDrainsTheBody(LocalServer server) throws Exception {
    URI url = spentLink(server);
    byte[] body = new byte[512 * 1024];
    try (Socket s = new Socket(url.getHost(), url.getPort())) {
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      for (int i = 0; i < 2; i++) {
        put(out, url, body.length);
        out.write(body);
        out.flush();
        String head = answer(s.getInputStream());
        assertThat(head).as("answer %d", i).startsWith("HTTP/1.1 401");
        assertThat(head.toLowerCase(java.util.Locale.ROOT)).as(head).doesNotContain("connection: close");
      }
    }
  }

  @Test
  @DisplayName("an upload past 8 MiB to a spent link is refused with Connection: close, and its unread body does not poison the connection")
  void spentLinkClosesTheConnection(LocalServer server) throws Exception {
    URI url = spentLink(server);
    try (Socket s = new Socket(url.getHost(), url.getPort())) {
      s.setSoTimeout(30_000);
      put(s.getOutputStream(), url, 8L * 1024 * 1024 + 1); // the head alone: nothing unread is left to reset it
      s.getOutputStream().flush();
      String head = answer(s.getInputStream());
      assertThat(head).startsWith("HTTP/1.1 401");
      assertThat(head.toLowerCase(java.util.Locale.ROOT)).as(head).contains("connection: close");
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
  }
}
