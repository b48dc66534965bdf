package io.sandboxes.local.internal.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.SandboxProcess;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Output frames written without a JSON tree are byte for byte what the tree would have given. */
class DataMessageTest {

  @Test
  @DisplayName("stdout, stderr and pty frames of every length (padding 0, 1, 2; one message and several) match the JSON tree's envelopes")
  void sameAsTree() throws java.io.IOException {
    Random random = new Random(42);
    int most = ProcessRpcs.DATA_MESSAGE_BYTES;
    for (SandboxProcess.Stream stream : SandboxProcess.Stream.values()) {
      String field = stream == SandboxProcess.Stream.STDERR ? "stderr" : stream == SandboxProcess.Stream.PTY ? "pty" : "stdout";
      for (int len : new int[] {0, 1, 2, 3, 4, 5, 1000, most - 1, most, most + 1, 2 * most, 65_537, 256 * 1024}) {
        byte[] data = new byte[len];
        random.nextBytes(data);
        // what the tree gives: one envelope for each DATA_MESSAGE_BYTES of the output (one for none)
        java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
        for (int at = 0; at < len || at == 0; at += most) {
          ObjectNode msg = Json.object();
          msg.putObject("event").putObject("data").put(field,
              Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(data, at, Math.min(len, at + most))));
          expected.writeBytes(Connect.envelope(0, Json.bytes(msg)));
        }
        // the chunk sits inside a larger frame, as output does in the daemon's frame
        byte[] frame = new byte[len + 7];
        System.arraycopy(data, 0, frame, 3, len);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        ProcessRpcs.writeData(out, stream, frame, 3, len);
        assertThat(out.toByteArray()).as("%s, %d bytes", field, len).isEqualTo(expected.toByteArray());
      }
    }
  }
}
