package io.sandboxes.local.contract;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/** Reads recorded envd requests the way the daemon would. */
final class Wire {
  private Wire() {}

  /** The message of a recorded streaming request (its single envelope). */
  static JsonNode startBody(FaultServer.Recorded r) {
    try {
      return Json.parse(Arrays.copyOfRange(r.body(), 5, r.body().length));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The shell command line of a recorded {@code Start} ({@code bash -l -c <command>}). */
  static String command(FaultServer.Recorded start) {
    return startBody(start).path("process").path("args").get(2).asText();
  }
}
