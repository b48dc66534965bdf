package io.sandboxes.examples.bench;

import io.sandboxes.ExecOptions;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stdout throughput through the whole stack (daemon, server, Connect framing, client), rounds
 * interleaved with a raw {@code docker exec} of the same command on the same image, so that a
 * noisy machine slows both sides of each ratio alike. Prints MB/s per round and the median ratio,
 * for output collected into the result and for output handed to a listener.
 *
 * <p>Arguments: rounds (default 9), megabytes per command (default 50).
 */
public final class StdoutBench {
  private StdoutBench() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
    long bytes = (args.length > 1 ? Long.parseLong(args[1]) : 50) * 1_000_000L;
    String command = "head -c " + bytes + " /dev/zero";
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer server = left.keep(LocalServer.builder().build().start());
      SandboxClient client = left.keep(Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
      String id = left.startRaw(docker);
      try (LiveSandbox s = client.provider().api().create()) {
        Measure.Op raw = new RawDocker(docker, id).stdout(bytes);
        Measure.Op collected = () -> Measure.check(s.exec(command).stdout().length() == bytes, "collected stdout");
        Measure.Op listened = () -> {
          AtomicLong seen = new AtomicLong();
          s.exec(command, ExecOptions.defaults().onStdout(text -> seen.addAndGet(text.length())));
          Measure.check(seen.get() == bytes, "listened stdout");
        };
        for (Measure.Op op : List.of(raw, collected, listened)) {
          op.run(); // warm-up
        }
        List<Double> rawRate = new ArrayList<>();
        List<Double> collectedRate = new ArrayList<>();
        List<Double> collectedRatio = new ArrayList<>();
        List<Double> listenedRatio = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
          double r = rate(raw, bytes);
          double c = rate(collected, bytes);
          double l = rate(listened, bytes);
          rawRate.add(r);
          collectedRate.add(c);
          collectedRatio.add(c / r);
          listenedRatio.add(l / r);
          System.out.printf("round %d: raw %.0f MB/s, collected %.0f MB/s (%.2fx), listener %.0f MB/s (%.2fx)%n",
              i + 1, r, c, c / r, l, l / r);
        }
        System.out.printf("median: raw %.0f MB/s; collected %.2fx raw; listener %.2fx raw%n",
            Measure.median(rawRate), Measure.median(collectedRatio), Measure.median(listenedRatio));
        Measure.targetHeader("Java client");
        Measure.row((bytes / 1_000_000) + " MB stdout collected, median (MB/s; raw docker exec)", Measure.median(rawRate),
            Measure.median(collectedRate), ">= 1.0x raw");
      } finally {
        left.removeRaw(docker, id);
      }
    }
  }

  private static double rate(Measure.Op op, long bytes) throws Exception {
    long t = System.nanoTime();
    op.run();
    return bytes / 1e6 / ((System.nanoTime() - t) / 1e9);
  }
}
