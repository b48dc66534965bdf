package io.sandboxes.examples.bench;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One agent fan-out, again and again: rounds of {@code n} concurrent creates, each followed by one
 * {@code echo}, against a warm pool of {@code n} refilled between rounds; per round, where the
 * time went (the creates alone, the first commands) and where the machine's CPU went during the
 * burst (this JVM, which holds both the client and the server, and of it the JIT's compiler
 * threads and the garbage collector's; the sandboxes' containers; the engine's daemons,
 * {@code dockerd} and {@code containerd} with its shims; the rest is mostly the kernel's). Raw Docker in the same run: one create+start, timed between the
 * rounds, the yardstick of issue 26's "burst of 50 p95 &lt;= 1.0x a raw create+start of one".
 * The first rounds carry the JIT's compiling (most of this JVM's CPU in round 0); read the later
 * ones, and {@link WarmBench} for the burst after a suite's worth of other calls.
 *
 * <p>{@code scripts/run-examples.sh bench.BurstBench [n=50] [rounds=8]}
 */
public final class BurstBench {
  private BurstBench() {}

  /** One round: per call, the create's and the echo's time, and the CPU the machine spent meanwhile. */
  private record Round(List<Double> creates, List<Double> wholes, Cpu cpu, int errors) {}

  /**
   * CPU milliseconds, cumulative: the machine busy, this JVM, Docker's containers (-1 when
   * unreadable), this JVM's compiler and GC threads, the engine's daemons.
   */
  private record Cpu(double machine, double jvm, double containers, double jit, double gc, double engine) {
    Cpu minus(Cpu o) {
      return new Cpu(machine - o.machine, jvm - o.jvm, containers < 0 || o.containers < 0 ? -1 : containers - o.containers,
          jit - o.jit, gc - o.gc, engine - o.engine);
    }
  }

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 50;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer server = left.keep(LocalServer.builder().warmPool(n).warmPoolMax(n).build().start());
      SandboxClient client = left.keep(Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
      E2BApi api = client.provider().api();
      List<Double> raw = new ArrayList<>();
      System.out.printf("%-6s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s%n", "round", "create50", "create95", "whole50", "whole95",
          "cpu:all", "jvm", "jvm:jit", "jvm:gc", "contnrs", "engine", "errors");
      List<Double> laterP95 = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        awaitReady(server, n);
        // the refill's last containers settle, as they would between an agent's fan-outs; the raw
        // start is timed on the same quiet machine, and its removal settles before the burst
        Thread.sleep(3_000);
        raw.add(rawCreateStart(left, docker));
        Thread.sleep(1_000);
        Round round = burst(api, n);
        double p95 = Measure.percentile(round.wholes(), 95);
        if (r >= rounds / 2) {
          laterP95.add(p95);
        }
        System.out.printf("%-6d %9.1f %9.1f %9.1f %9.1f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %7d%n", r,
            Measure.percentile(round.creates(), 50), Measure.percentile(round.creates(), 95),
            Measure.percentile(round.wholes(), 50), p95, round.cpu().machine(), round.cpu().jvm(), round.cpu().jit(),
            round.cpu().gc(), round.cpu().containers(), round.cpu().engine(), round.errors());
      }
      double rawOne = Measure.median(raw);
      System.out.printf("%nburst of %d on a pool of %d, %d rounds; times in ms, cpu in ms of CPU during the burst%n", n, n, rounds);
      Measure.targetHeader("ours");
      Measure.row("burst: create -> echo, p95, median of the later rounds (ms; raw one create+start)", rawOne,
          Measure.median(laterP95), "<= 1.0x raw");
    }
  }

  /** {@code n} creates and {@code echo hi}s at once, each timed; then all killed. */
  private static Round burst(E2BApi api, int n) throws Exception {
    List<Double> creates = Collections.synchronizedList(new ArrayList<>());
    List<Double> wholes = Collections.synchronizedList(new ArrayList<>());
    List<LiveSandbox> made = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch go = new CountDownLatch(1);
    int errors = 0;
    Cpu before;
    Cpu after;
    try (ExecutorService pool = Executors.newFixedThreadPool(n)) {
      List<Future<?>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        calls.add(pool.submit(() -> {
          go.await();
          long t0 = System.nanoTime();
          LiveSandbox s = api.create();
          creates.add((System.nanoTime() - t0) / 1e6);
          made.add(s);
          String echoed = s.exec("echo hi").stdout();
          Measure.check(echoed.equals("hi\n"), "echo in a burst's sandbox gave " + echoed);
          wholes.add((System.nanoTime() - t0) / 1e6);
          return null;
        }));
      }
      before = cpu();
      go.countDown();
      for (Future<?> f : calls) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          errors++;
          System.err.println("a burst's call failed: " + e.getCause());
        }
      }
      after = cpu();
    } finally {
      made.forEach(LiveSandbox::close);
    }
    Measure.check(!wholes.isEmpty(), "every call of a burst of " + n + " failed");
    return new Round(List.copyOf(creates), List.copyOf(wholes), after.minus(before), errors);
  }

  private static double rawCreateStart(Leftovers left, DockerRuntime docker) throws Exception {
    long t0 = System.nanoTime();
    String id = left.startRaw(docker);
    double ms = (System.nanoTime() - t0) / 1e6;
    left.removeRaw(docker, id);
    return ms;
  }

  private static void awaitReady(LocalServer server, int n) throws InterruptedException {
    long deadline = System.nanoTime() + 180_000_000_000L;
    while (server.warmPoolReady().getOrDefault("base", 0) < n) {
      Measure.check(System.nanoTime() < deadline, "the warm pool did not fill to " + n + " in 3 minutes");
      Thread.sleep(50);
    }
  }

  /** A {@code /proc} stat file's command name and its user and system clock ticks. */
  private record Stat(String name, double ticks) {
    /** @return the file's figures, or null when its process or thread has ended */
    static @org.jspecify.annotations.Nullable Stat of(Path file) {
      String st;
      try {
        st = Files.readString(file);
      } catch (IOException gone) {
        return null;
      }
      String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
      return new Stat(st.substring(st.indexOf('(') + 1, st.lastIndexOf(')')), Double.parseDouble(f[11]) + Double.parseDouble(f[12]));
    }
  }

  /** The clock ticks of the processes (or threads) numbered in {@code dir} whose command name passes {@code which}. */
  private static double ticks(Path dir, java.util.function.Predicate<String> which) throws IOException {
    double sum = 0;
    try (var entries = Files.list(dir)) {
      for (Path e : (Iterable<Path>) entries::iterator) {
        if (e.getFileName().toString().chars().allMatch(Character::isDigit)) {
          Stat s = Stat.of(e.resolve("stat"));
          sum += s != null && which.test(s.name()) ? s.ticks() : 0;
        }
      }
    }
    return sum;
  }

  /**
   * The CPU spent so far, in ms: the machine's busy time from {@code /proc/stat}, this process's
   * from {@code /proc/self/stat}, its threads' from {@code /proc/self/task} (a thread that ended
   * meanwhile takes its share out of the JIT's or the GC's figure), the engine's daemons' from
   * their {@code /proc/<pid>/stat} (all in clock ticks of 10 ms), and Docker's containers from
   * the cgroup v1 {@code cpuacct} of the {@code docker} parent (-1 where that is not so).
   */
  private static Cpu cpu() throws IOException {
    String[] all = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
    double busy = 0;
    for (int i = 1; i < all.length && i <= 8; i++) {
      if (i != 4 && i != 5) { // idle, iowait
        busy += Double.parseDouble(all[i]);
      }
    }
    double jvm = java.util.Objects.requireNonNull(Stat.of(Path.of("/proc/self/stat"))).ticks();
    Path cgroup = Path.of("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage");
    double containers = Files.isReadable(cgroup) ? Double.parseDouble(Files.readString(cgroup).trim()) / 1e6 : -1;
    double jit = ticks(Path.of("/proc/self/task"), name -> name.contains("CompilerThre"));
    double gc = ticks(Path.of("/proc/self/task"), name -> name.startsWith("GC ") || name.startsWith("G1 "));
    double engine = ticks(Path.of("/proc"), name -> name.equals("dockerd") || name.startsWith("containerd"));
    return new Cpu(busy * 10, jvm * 10, containers, jit * 10, gc * 10, engine * 10);
  }
}
