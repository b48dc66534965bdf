package io.sandboxes.examples.bench;

import io.sandboxes.Sandbox;
import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Time from a keystroke sent to a PTY to its echo coming back, through the public API
 * ({@code spawn} with a terminal): what an interactive client sees.
 */
final class PtyRoundTrip {
  private PtyRoundTrip() {}

  static List<Double> measure(Sandbox sandbox, int rounds) throws InterruptedException {
    List<Double> out = new ArrayList<>();
    LinkedBlockingQueue<String> echoes = new LinkedBlockingQueue<>();
    try (SpawnHandle cat = sandbox.spawn("/bin/cat", SpawnOptions.terminal(80, 24))) {
      cat.onStdout(echoes::add);
      for (int i = 0; i < rounds; i++) {
        String key = Character.toString('a' + (i % 26));
        long t0 = System.nanoTime();
        cat.write(key);
        String echo = echoes.poll(10, TimeUnit.SECONDS);
        if (echo == null || !echo.contains(key)) {
          throw new IllegalStateException("no echo of '" + key + "' (got " + echo + ")");
        }
        out.add((System.nanoTime() - t0) / 1_000_000.0);
      }
    }
    return out;
  }
}
