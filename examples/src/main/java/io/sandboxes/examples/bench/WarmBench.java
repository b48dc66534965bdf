package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The figures of "warm when it matters" (issue 26) that concern creating, killing and keeping
 * sandboxes, each beside its raw Docker Engine baseline measured in the same run on the same
 * image: back-to-back create, {@code echo}, kill cycles (p50 and p95 of create to echo answered,
 * create alone, kill on the caller's clock), bursts of concurrent create, {@code echo}, and the
 * idle cost of many sandboxes (container memory each, and the server's heap per sandbox).
 *
 * <p>The server is one with the default warm pool, as a user gets it; it is let fill to its target
 * (which grows with the creates it has seen) before the cycles and before each burst (a rested
 * server), and the cycles then run back to back. With {@code learn} 1, the cycles run once
 * unmeasured before the measured run, as a test suite's second run finds the server: the pool has
 * seen the demand and grown to it (it falls back after a minute without creates). The raw
 * side: {@code docker create}+{@code start} of a container like a sandbox's (network none), a
 * {@code docker exec} of {@code bash -l -c 'echo hi'} in it, and a forced remove; the raw cycles
 * run before and after ours, and a raw burst just before each of ours. Not a test: figures vary
 * with the machine's load; compare the ratios.
 *
 * <p>{@code scripts/run-examples.sh bench.WarmBench [cycles=30] [burst=10] [bigBurst=50] [idle=20] [learn=0] [poolMax=-1] [floor=2]};
 * {@code poolMax} is the server's {@code warmPoolMax} (a burst larger than it starts the rest cold; -1, the default:
 * the server's own default, from the engine's memory),
 * {@code floor} its {@code warmPool} (what a program that knows it fans out asks for);
 * {@code bench.WarmBench 5 3 5 3} finishes in well under a minute. Count 200 idle for the issue's
 * target (about 2 MiB of memory each, and a few minutes to start them on two cores).
 */
public final class WarmBench {
  private WarmBench() {}

  /** One sample of a create-to-echo path: the parts timed, in ms. */
  private record Cycle(double create, double createToEcho, double kill) {}

  /** Per-call times of a burst and how many of its calls failed. */
  private record Burst(List<Double> times, List<Double> creates, int errors) {}

  /** Memory of idle instances: MiB of container memory each, and for sandboxes the server's share. */
  private record Idle(int made, double containerMiB, double serverHeapMiB, double serverRssMiB, double seconds) {}

  public static void main(String[] args) throws Exception {
    int cycles = arg(args, 0, 30);
    int burst = arg(args, 1, 10);
    int bigBurst = arg(args, 2, 50);
    int idle = arg(args, 3, 20);
    boolean learn = arg(args, 4, 0) == 1;
    int poolMax = arg(args, 5, -1); // -1: the server's default, from the engine's memory
    int floor = arg(args, 6, LocalServer.DEFAULT_WARM_POOL);
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer.Builder builder = LocalServer.builder().warmPool(floor);
      if (poolMax >= 0) {
        builder.warmPoolMax(Math.max(floor, poolMax));
      }
      LocalServer server = left.keep(builder.build().start());
      int effectiveMax = info(server).path("warmPoolMax").asInt(-1);
      SandboxClient client = left.keep(Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
      E2BApi api = client.provider().api();
      // warm-up of both sides: the first container start, JIT, connection pools
      rawCycles(left, docker, 3);
      awaitFilled(server);
      ourCycles(api, 3);
      if (learn) {
        awaitFilled(server);
        ourCycles(api, cycles); // a suite's first run: the pool sees the demand
      }

      List<Cycle> raw = new ArrayList<>(rawCycles(left, docker, cycles));
      awaitFilled(server);
      String poolBefore = poolNow(server);
      List<Cycle> ours = ourCycles(api, cycles);
      raw.addAll(rawCycles(left, docker, cycles));
      double rawCreateOne = Measure.median(raw.stream().map(Cycle::create).toList());

      Burst rawSmall = rawBurst(left, docker, burst);
      awaitFilled(server);
      Burst oursSmall = ourBurst(api, burst);
      Burst rawBig = rawBurst(left, docker, bigBurst);
      awaitFilled(server);
      String poolBeforeBig = poolNow(server);
      Burst oursBig = ourBurst(api, bigBurst);

      Idle rawIdle = rawIdle(left, docker, idle);
      awaitFilled(server);
      Idle ourIdle = ourIdle(api, docker, idle);

      System.out.printf("%nmachine: %d cores, load average %.2f; %d cycles%s, bursts of %d and %d, %d idle%n",
          Runtime.getRuntime().availableProcessors(), ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
          cycles, learn ? " (after an unmeasured run of as many)" : "", burst, bigBurst, idle);
      System.out.printf("warm pool: floor %d, maximum %d%s; before the burst of %d: %s%n", floor, effectiveMax,
          poolMax < 0 ? " (the server's default)" : "",
          bigBurst, poolBeforeBig);
      System.out.printf("warm pool before the measured cycles: %s; cycles whose create took over 150 ms (a cold start's"
          + " time): %d of %d%n", poolBefore, ours.stream().filter(k -> k.create() > 150).count(), ours.size());
      Measure.targetHeader("ours");
      Measure.row("cycles: create -> echo, p50 (ms; raw create+start+exec)", p(raw, 50), p(ours, 50), "p50 <= 30 ms");
      Measure.row("cycles: create -> echo, p95 (ms; raw create+start+exec)", p(raw, 95), p(ours, 95), "p95 <= 60 ms");
      Measure.row("cycles: create alone, median (ms; raw create+start)", rawCreateOne,
          Measure.median(ours.stream().map(Cycle::create).toList()), "<= 0.25x raw");
      Measure.row("burst of " + burst + ": create -> echo, p95 (ms; raw burst)", Measure.percentile(rawSmall.times(), 95),
          Measure.percentile(oursSmall.times(), 95), "<= 150 ms");
      Measure.row("burst of " + bigBurst + ": create -> echo, p95 (ms; raw burst)", Measure.percentile(rawBig.times(), 95),
          Measure.percentile(oursBig.times(), 95), "");
      Measure.row("burst of " + bigBurst + ": create -> echo, p95 (ms; raw one create+start)", rawCreateOne,
          Measure.percentile(oursBig.times(), 95), "<= 1.0x raw");
      // where a burst's time goes: its creates alone, beside the whole create -> echo
      Measure.oursOnly("burst of " + bigBurst + ": create -> echo, p50 (ms)", Measure.percentile(oursBig.times(), 50), "");
      Measure.oursOnly("burst of " + bigBurst + ": create alone, p50 (ms)", Measure.percentile(oursBig.creates(), 50), "");
      Measure.oursOnly("burst of " + bigBurst + ": create alone, p95 (ms)", Measure.percentile(oursBig.creates(), 95), "");
      Measure.row("cycles: whole cycle create -> echo -> kill, mean (ms; raw with forced remove)", wholeMean(raw), wholeMean(ours), "");
      Measure.row("kill, caller's clock, median (ms; raw forced remove)", Measure.median(raw.stream().map(Cycle::kill).toList()),
          Measure.median(ours.stream().map(Cycle::kill).toList()), "<= 20 ms");
      Measure.row("idle: container memory each (MiB; raw sleep container)", rawIdle.containerMiB(), ourIdle.containerMiB(),
          "no worse than 0.65 MiB");
      Measure.oursOnly("idle: server heap per sandbox (MiB; no raw counterpart)", ourIdle.serverHeapMiB(), "< 1 MB");
      Measure.oursOnly("idle: server RSS growth per sandbox (MiB)", ourIdle.serverRssMiB(), "");
      Measure.row("idle: seconds to start them all, 4 at a time", rawIdle.seconds(), ourIdle.seconds(), "");
      System.out.printf("idle: %d of %d raw containers and %d of %d sandboxes started (target: 200 sandboxes)%n",
          rawIdle.made(), idle, ourIdle.made(), idle);
      System.out.printf("errors: burst of %d raw %d ours %d; burst of %d raw %d ours %d%n", burst, rawSmall.errors(),
          oursSmall.errors(), bigBurst, rawBig.errors(), oursBig.errors());
    }
  }

  /**
   * Waits until the warm pool of {@code base} holds its target (what it has grown to), as
   * {@code GET /local/server} reports it; on a server that does not report one, its default size.
   */
  private static void awaitFilled(LocalServer server) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (true) {
      JsonNode now = info(server).path("warmPoolNow").path("base");
      int target = now.has("target") ? now.path("target").asInt() : LocalServer.DEFAULT_WARM_POOL;
      if (server.warmPoolReady().getOrDefault("base", 0) >= target) {
        return;
      }
      Measure.check(System.nanoTime() < deadline, "the warm pool did not fill to " + target + " in 2 minutes");
      Thread.sleep(50);
    }
  }

  /** The warm pool of {@code base} now, as {@code GET /local/server} reports it. */
  private static String poolNow(LocalServer server) throws Exception {
    JsonNode now = info(server).path("warmPoolNow").path("base");
    return now.isMissingNode() ? "ready " + server.warmPoolReady().getOrDefault("base", 0) : now.toString();
  }

  private static JsonNode info(LocalServer server) throws Exception {
    try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
      var r = http.send(java.net.http.HttpRequest.newBuilder(server.apiUrl().resolve("/local/server"))
          .header("X-API-KEY", server.apiKey()).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
      return new ObjectMapper().readTree(r.body());
    }
  }

  private static int arg(String[] args, int i, int otherwise) {
    return args.length > i ? Integer.parseInt(args[i]) : otherwise;
  }

  /** The mean of whole cycles, kill included: what a suite of back-to-back tests waits per test. */
  private static double wholeMean(List<Cycle> cycles) {
    return cycles.stream().mapToDouble(c -> c.createToEcho() + c.kill()).average().orElse(Double.NaN);
  }

  private static double p(List<Cycle> cycles, double percentile) {
    return Measure.percentile(cycles.stream().map(Cycle::createToEcho).toList(), percentile);
  }

  /** Raw create+start, exec {@code bash -l -c 'echo hi'}, forced remove, {@code n} times back to back. */
  private static List<Cycle> rawCycles(Leftovers left, DockerRuntime docker, int n) throws Exception {
    List<Cycle> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      String id = left.startRaw(docker);
      long t1 = System.nanoTime();
      new RawDocker(docker, id).echo().run();
      long t2 = System.nanoTime();
      left.removeRaw(docker, id);
      out.add(new Cycle(ms(t1 - t0), ms(t2 - t0), ms(System.nanoTime() - t2)));
    }
    return out;
  }

  /** Create, {@code echo hi}, kill, {@code n} times back to back. */
  private static List<Cycle> ourCycles(E2BApi api, int n) {
    List<Cycle> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      LiveSandbox s = api.create();
      long t1 = System.nanoTime();
      String echoed;
      try {
        echoed = s.exec("echo hi").stdout();
      } catch (RuntimeException e) {
        s.close();
        throw e;
      }
      long t2 = System.nanoTime();
      s.close();
      out.add(new Cycle(ms(t1 - t0), ms(t2 - t0), ms(System.nanoTime() - t2)));
      Measure.check(echoed.equals("hi\n"), "echo in a fresh sandbox gave " + echoed);
    }
    return out;
  }

  /** {@code n} raw create+start+echo at once, each timed to its echo, then all removed. */
  private static Burst rawBurst(Leftovers left, DockerRuntime docker, int n) throws Exception {
    List<String> made = Collections.synchronizedList(new ArrayList<>());
    try {
      return burst(n, new ArrayList<>(), () -> {
        String id = left.startRaw(docker);
        made.add(id);
        new RawDocker(docker, id).echo().run();
      });
    } finally {
      made.forEach(id -> left.removeRaw(docker, id));
    }
  }

  /** {@code n} creates and {@code echo hi}s at once, each timed to its echo, then all killed. */
  private static Burst ourBurst(E2BApi api, int n) throws Exception {
    List<LiveSandbox> made = Collections.synchronizedList(new ArrayList<>());
    List<Double> creates = Collections.synchronizedList(new ArrayList<>());
    try {
      return burst(n, creates, () -> {
        long t0 = System.nanoTime();
        LiveSandbox s = api.create();
        creates.add(ms(System.nanoTime() - t0));
        made.add(s);
        String echoed = s.exec("echo hi").stdout();
        Measure.check(echoed.equals("hi\n"), "echo in a burst's sandbox gave " + echoed);
      });
    } finally {
      made.forEach(LiveSandbox::close);
    }
  }

  private static Burst burst(int n, List<Double> creates, Measure.Op op) throws InterruptedException {
    List<Double> times = Collections.synchronizedList(new ArrayList<>());
    List<Callable<Object>> ops = new ArrayList<>();
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    for (int i = 0; i < n; i++) {
      ops.add(() -> {
        go.await();
        long t0 = System.nanoTime();
        op.run();
        times.add(ms(System.nanoTime() - t0));
        return null;
      });
    }
    int errors = 0;
    try (ExecutorService pool = Executors.newFixedThreadPool(n)) {
      List<Future<Object>> futures = new ArrayList<>();
      for (Callable<Object> c : ops) {
        futures.add(pool.submit(c));
      }
      go.countDown();
      for (Future<Object> f : futures) {
        try {
          f.get();
        } catch (ExecutionException e) {
          errors++;
          System.err.println("a burst's call failed: " + e.getCause());
        }
      }
    }
    if (times.isEmpty()) {
      throw new IllegalStateException("every call of a burst of " + n + " failed");
    }
    return new Burst(List.copyOf(times), List.copyOf(creates), errors);
  }

  /** {@code n} idle raw containers (4 started at a time): their memory each, then removed. */
  private static Idle rawIdle(Leftovers left, DockerRuntime docker, int n) throws Exception {
    List<String> made = Collections.synchronizedList(new ArrayList<>());
    try {
      long t0 = System.nanoTime();
      int started = inParallel(n, () -> made.add(left.startRaw(docker)));
      double seconds = (System.nanoTime() - t0) / 1e9;
      settle();
      return new Idle(started, meanMiB(docker, List.copyOf(made)), 0, 0, seconds);
    } finally {
      inParallel(made.size(), () -> {
        String id;
        synchronized (made) {
          id = made.removeLast();
        }
        left.removeRaw(docker, id);
      });
    }
  }

  /** {@code n} idle sandboxes (4 created at a time): container memory each, and the server's growth per sandbox. */
  private static Idle ourIdle(E2BApi api, DockerRuntime docker, int n) throws Exception {
    List<LiveSandbox> made = Collections.synchronizedList(new ArrayList<>());
    try {
      long heap0 = heapAfterGc();
      long rss0 = rss();
      long t0 = System.nanoTime();
      int started = inParallel(n, () -> made.add(api.create()));
      double seconds = (System.nanoTime() - t0) / 1e9;
      settle();
      long heap1 = heapAfterGc();
      long rss1 = rss();
      Map<String, String> containers = new java.util.HashMap<>();
      // a warm pool member carries no sandbox-id label; its name is the sandbox's from the start
      for (var c : docker.listOurs()) {
        for (String name : c.getNames()) {
          containers.put(name.replaceFirst("^/sandboxes-", ""), c.getId());
        }
      }
      List<String> ids = new ArrayList<>();
      for (LiveSandbox s : List.copyOf(made)) {
        String id = containers.get(s.id());
        Measure.check(id != null, "no container found for sandbox " + s.id());
        ids.add(id);
      }
      double mib = 1024.0 * 1024.0;
      return new Idle(started, meanMiB(docker, ids), (heap1 - heap0) / mib / started, (rss1 - rss0) / mib / started, seconds);
    } finally {
      inParallel(made.size(), () -> {
        LiveSandbox s;
        synchronized (made) {
          s = made.removeLast();
        }
        s.close();
      });
    }
  }

  /** Runs {@code op} {@code n} times, 4 at a time; returns how many succeeded (failures are printed). */
  private static int inParallel(int n, Measure.Op op) throws InterruptedException {
    return inParallel(n, 4, op);
  }

  private static int inParallel(int n, int parallel, Measure.Op op) throws InterruptedException {
    int ok = 0;
    try (ExecutorService pool = Executors.newFixedThreadPool(parallel)) {
      List<Future<Object>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        futures.add(pool.submit(() -> {
          op.run();
          return null;
        }));
      }
      for (Future<Object> f : futures) {
        try {
          f.get();
          ok++;
        } catch (ExecutionException e) {
          System.err.println("failed: " + e.getCause());
        }
      }
    }
    return ok;
  }

  /** Lets the fresh instances finish starting up before their memory is read. */
  private static void settle() throws InterruptedException {
    Thread.sleep(5_000);
  }

  /**
   * The mean memory of {@code containers} in MiB as {@code docker stats} counts it: the cgroup's
   * usage less its inactive file cache.
   */
  private static double meanMiB(DockerRuntime docker, List<String> containers) throws Exception {
    if (containers.isEmpty()) {
      throw new IllegalStateException("no container to read the memory of");
    }
    ObjectMapper json = new ObjectMapper();
    List<Double> each = Collections.synchronizedList(new ArrayList<>());
    List<String> queue = Collections.synchronizedList(new ArrayList<>(containers));
    // the engine takes two samples a second apart per container: 8 at a time
    int read = inParallel(containers.size(), 8, () -> {
      String id = queue.removeLast();
      byte[] body = docker.getJson("/containers/" + id + "/stats?stream=false&one-shot=true", 1 << 20);
      Measure.check(body != null, "container " + id + " is gone");
      JsonNode m = json.readTree(body).path("memory_stats");
      Measure.check(m.has("usage"), "the engine gave no memory usage for " + id + ": " + m);
      JsonNode stats = m.path("stats");
      long inactive = stats.has("total_inactive_file") ? stats.path("total_inactive_file").asLong()
          : stats.path("inactive_file").asLong();
      each.add((m.path("usage").asLong() - inactive) / 1024.0 / 1024.0);
    });
    Measure.check(read == containers.size(), "the memory of " + (containers.size() - read) + " containers could not be read");
    return each.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
  }

  private static long heapAfterGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** This process's resident set in bytes, from /proc/self/status. */
  private static long rss() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }

  private static double ms(long nanos) {
    return nanos / 1_000_000.0;
  }
}
