package io.sandboxes.local.internal.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.SandboxProcess;
import io.sandboxes.local.internal.SandboxProcess.Data;
import io.sandboxes.local.internal.SandboxProcess.Stream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Output chunks queued behind one another are joined into one message while they are of the same
 * output and fit in 32 KiB; nothing is lost, repeated or reordered, and the event that stopped the
 * join is handed back to be sent next.
 */
class CoalescedOutputTest {

  private static Data chunk(Stream stream, char fill, int len) {
    byte[] frame = new byte[len + 10];
    Arrays.fill(frame, 5, 5 + len, (byte) fill);
    return new Data(stream, frame, 5, len); // inside a larger frame, as the daemon's chunks are
  }

  /** Sends every queued event as the server's stream does: each chunk, joined with what follows it. */
  private static List<String> send(ArrayDeque<SandboxProcess.Event> queue) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SandboxProcess.Event e = queue.poll();
    while (e instanceof Data d) {
      SandboxProcess.Event next = ProcessRpcs.writeCoalesced(out, d, queue::poll);
      e = next != null ? next : queue.poll();
    }
    List<String> messages = new ArrayList<>();
    ByteArrayInputStream in = new ByteArrayInputStream(out.toByteArray());
    Connect.Envelope env;
    while ((env = Connect.read(in)) != null) {
      var data = Json.parse(env.payload()).path("event").path("data");
      String field = data.fieldNames().next();
      String text = new String(Base64.getDecoder().decode(data.get(field).asText()), java.nio.charset.StandardCharsets.US_ASCII);
      if (text.isEmpty()) {
        messages.add(field + ":empty");
        continue;
      }
      messages.add(field + ":" + text.charAt(0) + "x" + text.length() + (text.chars().distinct().count() == 1 ? "" : " mixed " + text));
    }
    return messages;
  }

  @Test
  @DisplayName("small chunks of one output join up to 32 KiB; another output, a chunk that would not fit, or the end stops the join")
  void joinsWhatIsQueued() throws Exception {
    ArrayDeque<SandboxProcess.Event> queue = new ArrayDeque<>();
    queue.add(chunk(Stream.STDOUT, 'a', 4096));
    queue.add(chunk(Stream.STDOUT, 'a', 4096));
    queue.add(chunk(Stream.STDOUT, 'a', 4096));
    queue.add(chunk(Stream.STDERR, 'e', 10));
    queue.add(chunk(Stream.STDOUT, 'b', 20_000));
    queue.add(chunk(Stream.STDOUT, 'c', 20_000)); // 40 000 together: past 32 KiB
    queue.add(chunk(Stream.STDOUT, 'd', 40_000)); // big already: sent as it is
    queue.add(chunk(Stream.STDOUT, 'f', 100));
    queue.add(chunk(Stream.STDOUT, 'f', 100));
    SandboxProcess.End end = new SandboxProcess.End(0, true, "exit status 0", null);
    queue.add(end);

    assertThat(send(queue)).containsExactly("stdout:ax12288", "stderr:ex10", "stdout:bx20000", "stdout:cx20000", "stdout:dx40000",
        "stdout:fx200");
    assertThat(queue).as("the end, taken by the last join, is handed back rather than lost").isEmpty();
  }

  @Test
  @DisplayName("chunks of no bytes stay messages of their own, and at most 1024 chunks make one message: a flood of empty chunks is never taken whole")
  void emptyChunksAndTheCountCap() throws Exception {
    ArrayDeque<SandboxProcess.Event> queue = new ArrayDeque<>();
    queue.add(chunk(Stream.STDOUT, 'a', 10));
    queue.add(chunk(Stream.STDOUT, 'z', 0));
    queue.add(chunk(Stream.STDOUT, 'z', 0));
    queue.add(chunk(Stream.STDOUT, 'b', 10));
    queue.add(chunk(Stream.STDERR, 'e', 1));
    for (int i = 0; i < 1100; i++) {
      queue.add(chunk(Stream.STDOUT, 'c', 1));
    }
    assertThat(send(queue)).containsExactly("stdout:ax10", "stdout:empty", "stdout:empty", "stdout:bx10", "stderr:ex1", "stdout:cx1024",
        "stdout:cx76");
    // an empty chunk stops a join: the call takes it and hands it back, however many are queued
    for (int i = 0; i < 10_000; i++) {
      queue.add(chunk(Stream.STDOUT, 'z', 0));
    }
    ProcessRpcs.writeCoalesced(new ByteArrayOutputStream(), chunk(Stream.STDOUT, 'a', 1), queue::poll);
    assertThat(queue).hasSize(10_000 - 1);
  }

  @Test
  @DisplayName("the event that stops a join is returned, not dropped: an end right behind a chunk comes back")
  void returnsWhatStoppedTheJoin() throws Exception {
    ArrayDeque<SandboxProcess.Event> queue = new ArrayDeque<>();
    SandboxProcess.End end = new SandboxProcess.End(3, true, "exit status 3", null);
    queue.add(chunk(Stream.STDOUT, 'a', 10));
    queue.add(end);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(ProcessRpcs.writeCoalesced(out, (Data) queue.poll(), queue::poll)).isSameAs(end);
    ByteArrayOutputStream alone = new ByteArrayOutputStream();
    ProcessRpcs.writeData(alone, Stream.STDOUT, chunk(Stream.STDOUT, 'a', 10).buf(), 5, 10);
    assertThat(out.toByteArray()).isEqualTo(alone.toByteArray());
    assertThat(ProcessRpcs.writeCoalesced(new ByteArrayOutputStream(), chunk(Stream.STDOUT, 'a', 10), queue::poll))
        .as("nothing queued: nothing taken").isNull();
  }
}
