package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The process stream's output is read the same whichever way the JSON around it is written. */
class ProcessMessageTest {

  private static ConnectStream stream(String... messages) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    for (String m : messages) {
      body.writeBytes(Connect.envelope(0, m.getBytes(StandardCharsets.UTF_8)));
    }
    body.writeBytes(Connect.envelope(Connect.FLAG_END_STREAM, "{}".getBytes(StandardCharsets.UTF_8)));
    return new ConnectStream(new ByteArrayInputStream(body.toByteArray()), "test stream",
        (code, message) -> new SandboxException(code + ": " + message));
  }

  private static List<ProcessMessage> all(ConnectStream s) {
    List<ProcessMessage> out = new ArrayList<>();
    ProcessMessage m;
    while ((m = ProcessMessage.next(s)) != null) {
      out.add(m);
    }
    return out;
  }

  @Test
  @DisplayName("compact, spaced, escaped and extra-field forms of an output message give the same bytes and channel")
  void formsAgree() {
    Random random = new Random(7);
    for (int len : new int[] {0, 1, 2, 3, 100, 70_001}) {
      byte[] data = new byte[len];
      random.nextBytes(data);
      String b64 = Base64.getEncoder().encodeToString(data);
      for (String field : new String[] {"stdout", "stderr", "pty"}) {
        List<ProcessMessage> got = all(stream(
            "{\"event\":{\"data\":{\"" + field + "\":\"" + b64 + "\"}}}",
            "{\"event\": {\"data\": {\"" + field + "\": \"" + b64 + "\"}}}",
            "{\"event\":{\"data\":{\"" + field + "\":\"" + b64.replace("/", "\\/") + "\"}}}",
            "{\"event\":{\"data\":{\"" + field + "\":\"" + b64 + "\",\"x\":1}}}"));
        assertThat(got).hasSize(4);
        for (ProcessMessage m : got) {
          assertThat(m.isOutput()).isTrue();
          assertThat(m.channel()).isEqualTo(ProcessMessage.Channel.valueOf(field.toUpperCase(java.util.Locale.ROOT)));
          assertThat(m.output()).as("%s, %d bytes", field, len).isEqualTo(data);
        }
      }
    }
  }

  @Test
  @DisplayName("an event that is not output comes as its JSON, and output that is not base64 is an error, not bytes")
  void eventsAndBadOutput() {
    List<ProcessMessage> got = all(stream("{\"event\":{\"start\":{\"pid\":7}}}", "{\"event\":{\"keepalive\":{}}}"));
    assertThat(got).extracting(ProcessMessage::isOutput).containsExactly(false, false);
    assertThat(got.get(0).event().path("start").path("pid").asInt()).isEqualTo(7);
    assertThat(got.get(1).event().has("keepalive")).isTrue();

    ConnectStream bad = stream("{\"event\":{\"data\":{\"stdout\":\"not*base64\"}}}");
    assertThatThrownBy(() -> ProcessMessage.next(bad)).isInstanceOf(SandboxException.class).hasMessageContaining("not base64");
  }
}
