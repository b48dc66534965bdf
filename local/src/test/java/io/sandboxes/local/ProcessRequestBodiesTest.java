package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What envd's process calls accept and refuse in their request messages, exactly: the process
 * selector (Connect, SendInput, SendSignal, CloseStdin, Update), the input, the signal and a
 * PTY's size, each with its status and message, against running processes of a real sandbox.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProcessRequestBodiesTest {
  private static final String NEEDS_SELECTOR = "the process selector needs a pid or a tag";
  private static final String PID = "'process.pid' must be a whole number";

  private EnvdHttp envd;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    this.envd = EnvdHttp.open(e2b, server);
  }

  @AfterAll
  void stop() {
    if (envd != null) {
      envd.close();
    }
  }

  /** A unary call's status and body. */
  private String unary(String call, String body) throws Exception {
    return envd.unary("/process.Process/" + call, body);
  }

  private void unaryRefused(String call, String body, int status, String code, String message) throws Exception {
    assertThat(unary(call, body)).as("%s %s", call, body)
        .isEqualTo(status + " " + Json.string(Json.object().put("code", code).put("message", message)));
  }

  /**
   * A streaming call that ends at once: its end message's error as {@code code message}, or, when
   * the call was answered as a unary error, its status, code and message.
   */
  private String streamEnd(String call, String body) throws Exception {
    HttpRequest r = envd.stream("/process.Process/" + call, body).build();
    HttpResponse<byte[]> a = envd.http.send(r, HttpResponse.BodyHandlers.ofByteArray());
    if (!a.headers().firstValue("Content-Type").orElse("").startsWith(Connect.STREAM_CONTENT_TYPE)) {
      JsonNode e = Json.parse(a.body());
      return a.statusCode() + " " + e.path("code").asText() + " " + e.path("message").asText();
    }
    try (InputStream in = new ByteArrayInputStream(a.body())) {
      Connect.Envelope env;
      while ((env = Connect.read(in)) != null) {
        if (env.endStream()) {
          JsonNode e = Json.parse(env.payload()).path("error");
          return e.path("code").asText() + " " + e.path("message").asText();
        }
      }
    }
    throw new AssertionError(call + " " + body + ": no end message");
  }

  /** A streamed call's process: its pid, its output as it comes, and its end event once it ends. */
  private static final class Stream {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    volatile int pid = -1;
    volatile @Nullable JsonNode end;

    synchronized byte[] bytes() {
      return out.toByteArray();
    }

    String text() {
      return new String(bytes(), StandardCharsets.UTF_8);
    }

    synchronized void add(byte[] b) {
      out.writeBytes(b);
    }
  }

  private Stream follow(String call, String body) {
    Stream s = new Stream();
    HttpRequest r = envd.stream("/process.Process/" + call, body).build();
    CompletableFuture<HttpResponse<InputStream>> f = envd.http.sendAsync(r, HttpResponse.BodyHandlers.ofInputStream());
    Thread.ofVirtual().start(() -> {
      try (InputStream in = f.join().body()) {
        Connect.Envelope env;
        while ((env = Connect.read(in)) != null && !env.endStream()) {
          JsonNode event = Json.parse(env.payload()).path("event");
          if (event.has("start")) {
            s.pid = event.path("start").path("pid").asInt();
          }
          JsonNode data = event.path("data");
          for (String field : new String[] {"stdout", "pty"}) {
            if (data.has(field)) {
              s.add(Base64.getDecoder().decode(data.get(field).asText()));
            }
          }
          if (event.has("end")) {
            s.end = event.get("end");
          }
        }
      } catch (Exception e) {
        // the stream is over; what it carried stays
      }
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> s.pid > 0 || s.end != null);
    return s;
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("the process selector: a pid as a whole number or its text, a tag as any value's text; otherwise refused")
  void selectors() throws Exception {
    assertThat(streamEnd("Connect", "{\"process\":\"x\"}")).isEqualTo("invalid_argument " + NEEDS_SELECTOR);
    assertThat(streamEnd("Connect", "{\"process\":null,\"pid\":1}")).isEqualTo("invalid_argument " + NEEDS_SELECTOR);
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":\"999999\"}}")).isEqualTo("not_found process with pid 999999 not found");
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":999999.0,\"tag\":\"x\"}}"))
        .isEqualTo("not_found process with pid 999999 not found");
    assertThat(streamEnd("Connect", "{\"process\":{\"tag\":{}}}")).isEqualTo("not_found process with tag  not found");
    assertThat(streamEnd("Connect", "{\"process\":{\"tag\":12.5,\"future\":1}}")).isEqualTo("not_found process with tag 12.5 not found");
    // a null field is an absent one, as Connect's JSON reads it
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":null}}")).isEqualTo("invalid_argument " + NEEDS_SELECTOR);
    assertThat(streamEnd("Connect", "{\"process\":{\"tag\":null}}")).isEqualTo("invalid_argument " + NEEDS_SELECTOR);
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":null,\"tag\":\"nosuch\"}}")).isEqualTo("not_found process with tag nosuch not found");
    // a pid that is no whole number is the caller's mistake, named
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":\"x\"}}")).isEqualTo("invalid_argument " + PID);
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":1.5}}")).isEqualTo("invalid_argument " + PID);
    assertThat(streamEnd("Connect", "{\"process\":{\"pid\":4294967296}}")).isEqualTo("invalid_argument " + PID);
    unaryRefused("CloseStdin", "{\"process\":{\"pid\":[1]}}", 400, "invalid_argument", PID);
    unaryRefused("SendSignal", "{\"process\":{\"pid\":null},\"signal\":9}", 400, "invalid_argument", NEEDS_SELECTOR);
    unaryRefused("SendInput", "{\"process\":{\"tag\":\"nosuch\"},\"input\":5}", 404, "not_found", "process with tag nosuch not found");
    unaryRefused("Update", "{\"process\":{},\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}", 400, "invalid_argument", NEEDS_SELECTOR);
  }

  @Test
  @DisplayName("SendInput and CloseStdin: stdin as base64 (or base64url), pty first; Connect follows a running process")
  void inputAndStdin() throws Exception {
    Stream cat = follow("Start", "{\"process\":{\"cmd\":\"/bin/cat\"},\"tag\":\"pin-cat\"}");
    String byTag = "{\"process\":{\"tag\":\"pin-cat\"},";
    assertThat(unary("SendInput", byTag + "\"input\":{\"stdin\":\"" + b64("hi\n") + "\"}}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> cat.text().equals("hi\n"));
    // base64url where base64 does not fit; nothing written for input that names no stream
    assertThat(unary("SendInput", byTag + "\"input\":{\"stdin\":\"Pz8_\"}}")).isEqualTo("200 {}");
    assertThat(unary("SendInput", byTag + "\"input\":\"x\"}")).isEqualTo("200 {}");
    assertThat(unary("SendInput", byTag + "\"input\":{\"stdin\":null,\"future\":1}}")).isEqualTo("200 {}");
    // a null pty is no pty: the stdin beside it is what is written
    assertThat(unary("SendInput", byTag + "\"input\":{\"pty\":null,\"stdin\":\"" + b64("!\n") + "\"},\"future\":[]}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> cat.text().equals("hi\n???!\n"));
    // text that is neither is refused naming its field, as the other malformed fields are
    unaryRefused("SendInput", byTag + "\"input\":{\"stdin\":5}}", 400, "invalid_argument", "'input.stdin' must be base64");
    unaryRefused("SendInput", byTag + "\"input\":{\"stdin\":\"***\"}}", 400, "invalid_argument", "'input.stdin' must be base64");
    unaryRefused("SendInput", byTag + "\"input\":{\"stdin\":\"aGk=\",\"pty\":\"a b\"}}", 400, "invalid_argument",
        "'input.pty' must be base64");

    Stream connected = follow("Connect", "{\"process\":{\"pid\":\"" + cat.pid + "\"}}");
    assertThat(unary("SendInput", "{\"process\":{\"pid\":" + cat.pid + "},\"input\":{\"stdin\":\"" + b64("again\n") + "\"}}"))
        .isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> connected.text().equals("again\n"));
    assertThat(unary("CloseStdin", "{\"process\":{\"tag\":\"pin-cat\"},\"input\":{}}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> cat.end != null && connected.end != null);
    assertThat(connected.end.path("exited").asBoolean()).as(connected.end.toString()).isTrue();
    assertThat(cat.text()).isEqualTo("hi\n???!\nagain\n");
  }

  @Test
  @DisplayName("SendSignal: the signal by its name or number (a number's whole part); Update: a PTY's size read leniently")
  void signalsAndResize() throws Exception {
    Stream sleeper = follow("Start", "{\"process\":{\"cmd\":\"/bin/sleep\",\"args\":[\"600\"]},\"tag\":\"pin-sleep-a\"}");
    String byTag = "{\"process\":{\"tag\":\"pin-sleep-a\"}";
    unaryRefused("SendSignal", byTag + ",\"signal\":\"SIGNAL_SIGINT\"}", 400, "invalid_argument", "unsupported signal \"SIGNAL_SIGINT\"");
    unaryRefused("SendSignal", byTag + ",\"signal\":1.5}", 400, "invalid_argument", "unsupported signal 1.5");
    unaryRefused("SendSignal", byTag + "}", 400, "invalid_argument", "unsupported signal ");
    unaryRefused("SendSignal", byTag + ",\"signal\":null}", 400, "invalid_argument", "unsupported signal null");
    unaryRefused("SendSignal", byTag + ",\"signal\":{}}", 400, "invalid_argument", "unsupported signal {}");
    unaryRefused("SendSignal", byTag + ",\"signal\":\"SIGNAL_UNSPECIFIED\"}", 400, "invalid_argument",
        "unsupported signal \"SIGNAL_UNSPECIFIED\"");
    unaryRefused("Update", byTag + ",\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}", 400, "failed_precondition",
        "process " + sleeper.pid + " has no PTY to resize");

    Stream shell = follow("Start", "{\"process\":{\"cmd\":\"/bin/sh\"},\"tag\":\"pin-pty\",\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}");
    String pty = "{\"process\":{\"tag\":\"pin-pty\"}";
    unaryRefused("CloseStdin", pty + "}", 400, "failed_precondition", "a PTY has no stdin to close; send Ctrl-D (0x04) as input instead");
    String tooSmall = "pty.size needs cols and rows of at least 1";
    unaryRefused("Update", pty + ",\"pty\":{\"size\":{\"cols\":0,\"rows\":30}}}", 400, "invalid_argument", tooSmall);
    unaryRefused("Update", pty + ",\"pty\":{\"size\":{\"cols\":\"x\",\"rows\":30}}}", 400, "invalid_argument", tooSmall);
    unaryRefused("Update", pty + "}", 400, "invalid_argument", tooSmall);
    unaryRefused("Update", pty + ",\"pty\":\"x\"}", 400, "invalid_argument", tooSmall);
    unaryRefused("Update", pty + ",\"pty\":{\"size\":[100,30]}}", 400, "invalid_argument", tooSmall);
    assertThat(unary("Update", pty + ",\"pty\":{\"size\":{\"cols\":\"100\",\"rows\":31.9}}}")).isEqualTo("200 {}");
    assertThat(unary("SendInput", pty + ",\"input\":{\"pty\":\"" + b64("stty size\n") + "\",\"stdin\":\"" + b64("x") + "\"}}"))
        .isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> shell.text().contains("31 100"));

    assertThat(unary("SendSignal", byTag + ",\"signal\":9.7}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> sleeper.end != null);
    assertThat(sleeper.end.path("status").asText()).isEqualTo("signal: killed");
    assertThat(unary("SendSignal", pty + ",\"signal\":\"SIGNAL_SIGKILL\"}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> shell.end != null);
    Stream other = follow("Start", "{\"process\":{\"cmd\":\"/bin/sleep\",\"args\":[\"600\"]},\"tag\":\"pin-sleep-b\"}");
    assertThat(unary("SendSignal", "{\"process\":{\"pid\":\"" + other.pid + "\"},\"signal\":\"15\"}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(20)).until(() -> other.end != null);
    assertThat(other.end.path("status").asText()).isEqualTo("signal: terminated");
  }
}
