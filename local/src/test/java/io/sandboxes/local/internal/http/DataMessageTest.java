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
  @DisplayName("stdout, stderr and pty frames of every length (padding 0, 1, 2) match the JSON tree's envelope")
  void sameAsTree() throws java.io.IOException {
    Random random = new Random(42);
    for (SandboxProcess.Stream stream : SandboxProcess.Stream.values()) {
      String field = stream == SandboxProcess.Stream.STDERR ? "stderr" : stream == SandboxProcess.Stream.PTY ? "pty" : "stdout";
      for (int len : new int[] {0, 1, 2, 3, 4, 5, 1000, 65_537}) {
        byte[] data = new byte[len];
        random.nextBytes(data);
        ObjectNode msg = Json.object();
        msg.putObject("event").putObject("data").put(field, Base64.getEncoder().encodeToString(data));
        // the chunk sits inside a larger frame, as output does in the daemon's frame
        byte[] frame = new byte[len + 7];
        System.arraycopy(data, 0, frame, 3, len);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        ProcessRpcs.writeData(out, stream, frame, 3, len);
        assertThat(out.toByteArray()).as("%s, %d bytes", field, len)
            .isEqualTo(Connect.envelope(0, Json.bytes(msg)));
      }
    }
  }
}
