package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ConnectTest {

  private static byte[] concat(byte[]... parts) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.write(p);
    }
    return out.toByteArray();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  @DisplayName("an envelope is one flag byte, a big-endian length and the payload")
  void envelopeLayout() {
    byte[] env = Connect.envelope(Connect.FLAG_END_STREAM, utf8("{}"));
    assertThat(env).containsExactly(0x02, 0, 0, 0, 2, '{', '}');
  }

  @Test
  @DisplayName("envelopes read back in order; a clean end between envelopes is null")
  void readsEnvelopes() throws IOException {
    byte[] stream = concat(Connect.envelope(0, utf8("{\"a\":1}")), Connect.envelope(2, utf8("{}")));
    ByteArrayInputStream in = new ByteArrayInputStream(stream);
    Connect.Envelope first = Connect.read(in);
    assertThat(first.endStream()).isFalse();
    assertThat(new String(first.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
    assertThat(Connect.read(in).endStream()).isTrue();
    assertThat(Connect.read(in)).isNull();
  }

  @Test
  @DisplayName("a stream cut inside an envelope is an error, not an end")
  void truncated() {
    byte[] env = Connect.envelope(0, utf8("{\"long\":\"message\"}"));
    byte[] cut = java.util.Arrays.copyOf(env, env.length - 3);
    assertThatThrownBy(() -> Connect.read(new ByteArrayInputStream(cut))).isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> Connect.read(new ByteArrayInputStream(new byte[] {0, 0, 0}))).isInstanceOf(EOFException.class);
  }

  @Test
  @DisplayName("compressed envelopes are refused")
  void compressed() {
    byte[] env = Connect.envelope(Connect.FLAG_COMPRESSED, utf8("x"));
    assertThatThrownBy(() -> Connect.read(new ByteArrayInputStream(env))).hasMessageContaining("compressed");
  }

  @Test
  @DisplayName("codes map to HTTP statuses and back as the Connect protocol defines")
  void codes() {
    assertThat(Connect.httpStatus("not_found")).isEqualTo(404);
    assertThat(Connect.httpStatus("deadline_exceeded")).isEqualTo(504);
    assertThat(Connect.httpStatus("unauthenticated")).isEqualTo(401);
    assertThat(Connect.httpStatus("something_else")).isEqualTo(500);
    assertThat(Connect.codeForHttpStatus(404)).isEqualTo("unimplemented");
    assertThat(Connect.codeForHttpStatus(503)).isEqualTo("unavailable");
    assertThat(Connect.codeForHttpStatus(418)).isEqualTo("unknown");
  }

  @Test
  @DisplayName("a client stream yields messages, ends cleanly on {}, throws the error trailer, and refuses a missing end")
  void clientStream() throws IOException {
    ConnectStream.ErrorMapper mapper = (code, message) -> new SandboxRpcException(code, message, "test");
    byte[] ok = concat(Connect.envelope(0, utf8("{\"n\":1}")), Connect.envelope(2, utf8("{}")));
    try (ConnectStream s = new ConnectStream(new ByteArrayInputStream(ok), "test", mapper)) {
      assertThat(s.next().get("n").asInt()).isEqualTo(1);
      assertThat(s.next()).isNull();
      assertThat(s.next()).isNull();
    }
    byte[] failed = concat(Connect.envelope(0, utf8("{}")),
        Connect.envelope(2, utf8("{\"error\":{\"code\":\"not_found\",\"message\":\"process with pid 9 not found\"}}")));
    try (ConnectStream s = new ConnectStream(new ByteArrayInputStream(failed), "test", mapper)) {
      s.next();
      assertThatThrownBy(s::next).isInstanceOfSatisfying(SandboxRpcException.class, e -> {
        assertThat(e.code()).isEqualTo("not_found");
        assertThat(e.getMessage()).contains("pid 9");
      });
    }
    byte[] noEnd = Connect.envelope(0, utf8("{}"));
    try (ConnectStream s = new ConnectStream(new ByteArrayInputStream(noEnd), "test", mapper)) {
      s.next();
      assertThatThrownBy(s::next).isInstanceOf(SandboxException.class).hasMessageContaining("without its end-of-stream");
    }
  }
}
