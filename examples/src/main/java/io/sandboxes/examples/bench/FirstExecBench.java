package io.sandboxes.examples.bench;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The first commands in a sandbox just taken from a small warm pool, as a user of the default
 * server sees them: one create at a time, with a pause after each sandbox's end long enough for
 * the pool to refill, then three {@code echo}s back to back, then kill. A raw {@code docker exec}
 * of {@code bash -l -c 'echo hi'} in a container of the same image runs before each pause.
 *
 * <p>The pool's growth is capped at {@code poolMax} (default 2, the default pool's floor), so the
 * figure is that of a pool of that size, not of one grown by the run's own creates: what a
 * refill started beside the first commands costs them shows here (issue 26).
 *
 * <p>{@code scripts/run-examples.sh bench.FirstExecBench [rounds=12] [pauseMs=2000] [poolMax=2]}.
 */
public final class FirstExecBench {
  private FirstExecBench() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 12;
    long pauseMs = args.length > 1 ? Long.parseLong(args[1]) : 2000;
    int poolMax = args.length > 2 ? Integer.parseInt(args[2]) : LocalServer.DEFAULT_WARM_POOL;
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer server = left.keep(LocalServer.builder().warmPoolMax(poolMax).build().start());
      SandboxClient client = left.keep(Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
      E2BApi api = client.provider().api();
      Measure.Op raw = new RawDocker(docker, left.startRaw(docker)).echo();
      List<Double> rawMs = new ArrayList<>();
      List<Double> create = new ArrayList<>();
      List<List<Double>> execs = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
      for (int i = -2; i < rounds; i++) { // two to warm up
        LocalBench.awaitFull(server);
        long r = System.nanoTime();
        raw.run();
        double rawTook = (System.nanoTime() - r) / 1e6;
        Thread.sleep(pauseMs); // the raw exec's teardown in the engine is done by then too
        long t = System.nanoTime();
        LiveSandbox s = api.create();
        double created = (System.nanoTime() - t) / 1e6;
        double[] took = new double[3];
        for (int k = 0; k < 3; k++) {
          long e = System.nanoTime();
          Measure.check(s.exec("echo hi").stdout().equals("hi\n"), "echo in the sandbox just created");
          took[k] = (System.nanoTime() - e) / 1e6;
        }
        s.close();
        if (i >= 0) {
          rawMs.add(rawTook);
          create.add(created);
          for (int k = 0; k < 3; k++) {
            execs.get(k).add(took[k]);
          }
        }
      }
      System.out.printf("%nmachine: %d cores, load average %.2f; %d rounds, %d ms apart; pool of %s (at most %d)%n",
          Runtime.getRuntime().availableProcessors(), java.lang.management.ManagementFactory.getOperatingSystemMXBean()
              .getSystemLoadAverage(), rounds, pauseMs, LocalServer.DEFAULT_WARM_POOL, poolMax);
      double rawMedian = Measure.median(rawMs);
      Measure.header("ours");
      Measure.row("warm create, median (ms; raw exec bash -l -c)", rawMedian, Measure.median(create));
      for (int k = 0; k < 3; k++) {
        Measure.row(List.of("first", "second", "third").get(k) + " echo after it, median (ms; raw exec)", rawMedian,
            Measure.median(execs.get(k)));
        Measure.row("  p90 (ms; raw exec p90)", Measure.percentile(rawMs, 90), Measure.percentile(execs.get(k), 90));
      }
      Map<String, Integer> ready = server.warmPoolReady();
      System.out.println("pool at the end: " + ready);
    }
  }
}
