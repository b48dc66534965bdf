package io.sandboxes.examples.bench;

import io.sandboxes.Sandbox;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Measures the local runtime: time to create a sandbox (create request to a handle that has run
 * a command), time for an {@code echo} round trip, a 1 MiB file write and read, a 256 MiB read,
 * an HTTP GET through a forwarded port (preview URL), pause, resume, snapshot, a PTY keystroke,
 * and kill, on a server without a warm pool; then, on a server with the default warm pool, a
 * create with a member ready and its first exec, and a burst of 20 creates at once on each
 * server (p50, p90, errors) beside 20 raw create+starts at once.
 * Prints median and 90th percentile in milliseconds, then the figures that have a raw Docker
 * baseline (create+start, {@code bash -l -c 'echo hi'}, {@code cat} of 1 MiB both ways, a small
 * file's read, a folder's listing beside {@code ls -la}, 50 MB of stdout, 8 commands in parallel)
 * beside that baseline, measured in the same run through the
 * Docker Engine API on the same image, with the ratio (the cold create beside a raw create+start
 * made just before each of them, so that a drifting load on a shared machine does not skew the
 * ratio). Not a test: figures vary with the machine; compare the ratios.
 *
 * <p>{@code scripts/run-examples.sh bench.LocalBench [creates] [echoes]}
 */
public final class LocalBench {
  private LocalBench() {}

  public static void main(String[] args) throws Exception {
    int creates = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int echoes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    // the cold server has no warm pool, so every create below starts a container
    try (LocalServer server = LocalServer.builder().warmPool(0).build().start();
         SandboxClient client = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey())) {
      E2BSandboxProvider provider = client.provider();
      E2BApi sandboxes = provider.api();
      // warm-up: first container start, JIT, connection pools
      try (Sandbox warm = sandboxes.create()) {
        for (int i = 0; i < 10; i++) {
          warm.exec("echo warm");
        }
      }
      List<Double> create = new ArrayList<>();
      List<Double> firstExec = new ArrayList<>();
      List<Double> kill = new ArrayList<>();
      // each create right after a raw create+start: on a shared machine whose load drifts, a
      // ratio of figures taken minutes apart says more about the load than about the server
      List<Double> rawPaired = new ArrayList<>();
      for (int i = 0; i < creates; i++) {
        try (DockerRuntime docker = DockerRuntime.connect()) {
          long r0 = System.nanoTime();
          String raw = docker.createAndStart(RawDocker.spec());
          rawPaired.add(ms(System.nanoTime() - r0));
          docker.remove(raw);
        }
        long t0 = System.nanoTime();
        LiveSandbox s = sandboxes.create();
        long t1 = System.nanoTime();
        s.exec("true");
        long t2 = System.nanoTime();
        s.close();
        long t3 = System.nanoTime();
        create.add(ms(t1 - t0));
        firstExec.add(ms(t2 - t1));
        kill.add(ms(t3 - t2));
      }
      List<Double> echo = new ArrayList<>();
      List<Double> write = new ArrayList<>();
      List<Double> read = new ArrayList<>();
      byte[] mib = new byte[1 << 20];
      try (Sandbox s = sandboxes.create()) {
        for (int i = 0; i < echoes; i++) {
          long t0 = System.nanoTime();
          String out = s.exec("echo hi").stdout();
          echo.add(ms(System.nanoTime() - t0));
          if (!out.equals("hi\n")) {
            throw new IllegalStateException("unexpected echo output: " + out);
          }
        }
        for (int i = 0; i < 20; i++) {
          long t0 = System.nanoTime();
          s.writeBytes("/tmp/mib.bin", mib);
          long t1 = System.nanoTime();
          s.readBytes("/tmp/mib.bin");
          write.add(ms(t1 - t0));
          read.add(ms(System.nanoTime() - t1));
        }
      }
      List<Double> bigRead = new ArrayList<>();
      List<Double> previewGet = new ArrayList<>();
      try (LiveSandbox s = sandboxes.create()) {
        s.exec("truncate -s 256M /tmp/big.bin").orThrow();
        for (int i = 0; i < 3; i++) {
          long t0 = System.nanoTime();
          int n = s.readBytes("/tmp/big.bin").length;
          bigRead.add(ms(System.nanoTime() - t0));
          if (n != 256 << 20) {
            throw new IllegalStateException("read " + n + " bytes of 256 MiB");
          }
        }
        s.writeFile("/tmp/site/index.txt", "ok");
        s.exec("cd /tmp/site && (nohup python3 -m http.server 8000 >/dev/null 2>&1 &) && sleep 1").orThrow();
        java.net.URI url = server.forward(s.id(), 8000).resolve("/index.txt");
        try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
          for (int i = 0; i < 30; i++) {
            long t0 = System.nanoTime();
            String body = http.send(java.net.http.HttpRequest.newBuilder(url).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            previewGet.add(ms(System.nanoTime() - t0));
            if (!body.equals("ok")) {
              throw new IllegalStateException("unexpected page: " + body);
            }
          }
        }
      }
      List<Double> pause = new ArrayList<>();
      List<Double> resume = new ArrayList<>();
      List<Double> snapshot = new ArrayList<>();
      List<Double> pty = new ArrayList<>();
      try (LiveSandbox s = sandboxes.create()) {
        s.exec("nohup sleep 600 >/dev/null 2>&1 &");
        for (int i = 0; i < 10; i++) {
          long t0 = System.nanoTime();
          s.pause();
          long t1 = System.nanoTime();
          sandboxes.connect(s.id());
          pause.add(ms(t1 - t0));
          resume.add(ms(System.nanoTime() - t1));
        }
        for (int i = 0; i < 5; i++) {
          long t0 = System.nanoTime();
          sandboxes.createSnapshot(s.id(), "bench-snapshot");
          snapshot.add(ms(System.nanoTime() - t0));
        }
        sandboxes.deleteTemplate("bench-snapshot:default");
        pty.addAll(PtyRoundTrip.measure(s, 20));
      }
      Creates warm = warmCreates(creates);
      Burst coldBurst = burst(sandboxes, BURST);
      report("create (request to handle)", create);
      report("first exec after create", firstExec);
      report("kill", kill);
      report("warm create (pool member ready)", warm.create());
      report("first exec after warm create", warm.firstExec());
      report("burst of " + BURST + ", warm pool " + LocalServer.DEFAULT_WARM_POOL, warm.burst().times());
      report("burst of " + BURST + ", cold", coldBurst.times());
      System.out.printf("burst errors: warm pool %d, cold %d%n", warm.burst().errors(), coldBurst.errors());
      report("echo round trip", echo);
      report("write 1 MiB", write);
      report("read 1 MiB", read);
      report("read 256 MiB", bigRead);
      report("preview GET (forwarded port)", previewGet);
      report("pause (memory kept)", pause);
      report("resume (connect)", resume);
      report("snapshot", snapshot);
      report("PTY keystroke to echo", pty);
      System.out.println();
      baselines(sandboxes, Measure.median(rawPaired), Measure.median(create), Measure.median(echo), Measure.median(write),
          Measure.median(read), warm, coldBurst);
    }
  }

  private static final long STDOUT_BYTES = 50_000_000L;

  /** Our figures beside raw Docker's, on the same image in the same run. */
  private static final int BURST = 20;

  /** Per-request times of a burst and how many of its creates failed. */
  private record Burst(List<Double> times, int errors) {}

  /** What the warm server measured. */
  private record Creates(List<Double> create, List<Double> firstExec, Burst burst) {}

  /**
   * Creates on a server with a warm pool: one at a time with a member ready (the pool is let
   * refill before each), then a burst against the default pool size.
   */
  private static Creates warmCreates(int n) throws Exception {
    List<Double> create = new ArrayList<>();
    List<Double> firstExec = new ArrayList<>();
    Burst burst;
    try (LocalServer server = LocalServer.builder().build().start();
         SandboxClient client = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey())) {
      E2BApi sandboxes = client.provider().api();
      for (int i = -2; i < n; i++) { // two to warm up
        awaitFull(server);
        long t0 = System.nanoTime();
        LiveSandbox s = sandboxes.create();
        long t1 = System.nanoTime();
        s.exec("true");
        long t2 = System.nanoTime();
        s.close();
        if (i >= 0) {
          create.add(ms(t1 - t0));
          firstExec.add(ms(t2 - t1));
        }
      }
      awaitFull(server);
      burst = burst(sandboxes, BURST);
    }
    return new Creates(create, firstExec, burst);
  }

  /** Waits until the server's warm pool of {@code base} is full (2 minutes at most). */
  static void awaitFull(LocalServer server) throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (server.warmPoolReady().getOrDefault("base", 0) < LocalServer.DEFAULT_WARM_POOL) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the warm pool did not fill in 2 minutes");
      }
      Thread.sleep(50);
    }
  }

  /** {@code n} creates at once; each is timed from its request to its handle, then all are killed. */
  private static Burst burst(E2BApi sandboxes, int n) throws Exception {
    List<java.util.concurrent.Callable<Object>> ops = new ArrayList<>();
    List<Double> times = Collections.synchronizedList(new ArrayList<>());
    List<LiveSandbox> made = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < n; i++) {
      ops.add(() -> {
        long t0 = System.nanoTime();
        LiveSandbox s = sandboxes.create();
        times.add(ms(System.nanoTime() - t0));
        made.add(s);
        return null;
      });
    }
    int errors = 0;
    try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(n)) {
      for (java.util.concurrent.Future<Object> f : pool.invokeAll(ops)) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          errors++;
          System.err.println("burst create failed: " + e.getCause());
        }
      }
    }
    made.forEach(LiveSandbox::close);
    return new Burst(List.copyOf(times), errors);
  }

  /** {@code n} raw create+start at once, timed each, then removed. */
  private static Burst rawBurst(DockerRuntime docker, int n) throws Exception {
    List<java.util.concurrent.Callable<String>> ops = new ArrayList<>();
    List<Double> times = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < n; i++) {
      ops.add(() -> {
        long t0 = System.nanoTime();
        String id = docker.createAndStart(RawDocker.spec());
        times.add(ms(System.nanoTime() - t0));
        return id;
      });
    }
    int errors = 0;
    try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(n)) {
      for (java.util.concurrent.Future<String> f : pool.invokeAll(ops)) {
        try {
          docker.remove(f.get());
        } catch (java.util.concurrent.ExecutionException e) {
          errors++;
        }
      }
    }
    return new Burst(List.copyOf(times), errors);
  }

  private static void baselines(E2BApi sandboxes, double rawPaired, double create, double echo, double write, double read, Creates warm,
      Burst coldBurst) throws Exception {
    int rounds = 20;
    byte[] mib = new byte[1 << 20];
    String stdoutCommand = "head -c " + STDOUT_BYTES + " /dev/zero";
    try (DockerRuntime docker = DockerRuntime.connect()) {
      double rawCreate = Measure.medianMs(10, () -> docker.remove(docker.createAndStart(RawDocker.spec())));
      Burst rawBurst = rawBurst(docker, BURST);
      String id = docker.createAndStart(RawDocker.spec());
      try (LiveSandbox s = sandboxes.create()) {
        RawDocker raw = new RawDocker(docker, id);
        Measure.Op rawEcho = raw.echo();
        double rawEchoMs = Measure.medianMs(rounds, rawEcho);
        double rawWrite = Measure.medianMs(rounds, raw.write(mib));
        double rawRead = Measure.medianMs(rounds, raw.read(mib.length));
        byte[] small = "a small file\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Measure.check(docker.run(id, "root", List.of("sh", "-c", "cat > /tmp/raw.bin"), new java.io.ByteArrayInputStream(small))
            .exitCode() == 0, "raw small write");
        double rawSmallRead = Measure.medianMs(rounds, raw.read(small.length));
        s.writeBytes("/tmp/small.txt", small);
        double smallRead = Measure.medianMs(rounds, () -> Measure.check(s.readBytes("/tmp/small.txt").length == small.length, "small read"));
        double rawList = Measure.medianMs(rounds, () -> Measure.check(docker.run(id, "root", List.of("ls", "-la", "/etc"), null)
            .exitCode() == 0, "raw ls"));
        double list = Measure.medianMs(rounds, () -> Measure.check(!s.readDir("/etc").isEmpty(), "list"));
        double rawOut = mbPerSecond(raw.stdout(STDOUT_BYTES));
        double ourOut = mbPerSecond(() -> Measure.check(s.exec(stdoutCommand).stdout().length() == STDOUT_BYTES, "stdout"));
        double rawPar = Measure.perSecond(40, 8, rawEcho);
        double ourPar = Measure.perSecond(40, 8, () -> Measure.check(s.exec("echo hi").stdout().equals("hi\n"), "echo"));
        Measure.header("ours");
        Measure.row("create (ms; raw: create+start, network none, each just before)", rawPaired, create);
        Measure.row("warm create (ms; raw: create+start)", rawCreate, Measure.median(warm.create()));
        Measure.row("burst of " + BURST + ", warm pool, p50 (ms; raw burst)", Measure.median(rawBurst.times()),
            Measure.median(warm.burst().times()));
        Measure.row("burst of " + BURST + ", warm pool, p90 (ms; raw burst)", Measure.percentile(rawBurst.times(), 90),
            Measure.percentile(warm.burst().times(), 90));
        Measure.row("burst of " + BURST + ", cold, p50 (ms; raw burst)", Measure.median(rawBurst.times()),
            Measure.median(coldBurst.times()));
        Measure.row("burst of " + BURST + ", cold, p90 (ms; raw burst)", Measure.percentile(rawBurst.times(), 90),
            Measure.percentile(coldBurst.times(), 90));
        System.out.printf("burst errors: raw %d, warm pool %d, cold %d%n", rawBurst.errors(), warm.burst().errors(),
            coldBurst.errors());
        Measure.row("echo round trip (ms; raw: exec bash -l -c)", rawEchoMs, echo);
        Measure.row("write 1 MiB (ms; raw: exec sh -c 'cat >')", rawWrite, write);
        Measure.row("read 1 MiB (ms; raw: exec cat)", rawRead, read);
        Measure.row("read a 13-byte file (ms; raw: exec cat)", rawSmallRead, smallRead);
        Measure.row("list /etc (ms; raw: exec ls -la)", rawList, list);
        Measure.row("50 MB stdout (MB/s)", rawOut, ourOut);
        Measure.row("8 in parallel, echo (execs/s)", rawPar, ourPar);
      } finally {
        docker.remove(id);
      }
    }
  }

  private static double mbPerSecond(Measure.Op op) throws Exception {
    return STDOUT_BYTES / 1e6 / (Measure.medianMs(5, op) / 1e3);
  }

  private static double ms(long nanos) {
    return nanos / 1_000_000.0;
  }

  private static void report(String what, List<Double> samples) {
    System.out.printf("%-28s n=%-4d median %8.1f ms   p90 %8.1f ms%n", what, samples.size(), Measure.median(samples),
        Measure.percentile(samples, 90));
  }
}
