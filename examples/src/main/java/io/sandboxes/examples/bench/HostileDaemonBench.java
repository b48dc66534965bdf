package io.sandboxes.examples.bench;

import io.sandboxes.SpawnHandle;
import io.sandboxes.SpawnOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one sandbox's misbehaving daemon costs everyone else. One sandbox's daemon is replaced by
 * {@code fake_daemon.py} (run as root inside it, as anything in a sandbox can), which attacks in
 * one way after another; meanwhile another sandbox runs {@code echo ok} over and over and the
 * server's {@code /health} is asked, and the heap (after a collection) is sampled. Prints, per
 * attack, the other sandbox's exec and the health answer at p50 and p99 in ms, the most the heap
 * grew in MiB, and, beside them, a raw {@code docker exec} of the same command measured in the
 * same run, with the ratio, and the CPU this JVM used meanwhile (the server, its clients and the
 * sampling; 100 is one core). The targets: p99 under 50 ms for the health answer and the other
 * sandbox's exec, and under 64 MiB of heap for the misbehaving sandbox.
 *
 * <p>{@code scripts/run-examples.sh bench.HostileDaemonBench [samples] [seconds] [attack,...]} (from the
 * repository's root, which holds the fake daemon under local/src/test/resources)
 */
public final class HostileDaemonBench {
  private HostileDaemonBench() {}

  /** From the repository's root, or from examples/, where {@code scripts/run-examples.sh} runs it. */
  private static final Path FAKE = java.util.stream.Stream.of("", "../")
      .map(up -> Path.of(up + "local/src/test/resources/io/sandboxes/local/fake_daemon.py"))
      .filter(Files::isRegularFile).findFirst()
      .orElse(Path.of("local/src/test/resources/io/sandboxes/local/fake_daemon.py"));

  /** One attack: the fake's mode, and what the attacked sandbox's client does to set it off. */
  private record Attack(String mode, String what) {}

  public static void main(String[] args) throws Exception {
    int samples = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    List<String> only = args.length > 2 ? List.of(args[2].split(",")) : List.of();
    if (!Files.isRegularFile(FAKE)) {
      throw new IllegalStateException("run from the repository (its root or examples/): " + FAKE + " is not there");
    }
    byte[] script = Files.readAllBytes(FAKE);
    List<Attack> attacks = List.of(
        new Attack("flood", "1-byte output frames at the pace of its credit, to a client that reads them"),
        new Attack("zero-flood", "zero-length output frames past its credit, to a client that does not read"),
        new Attack("big-answers", "720 MB of listing entries for 4 listings at once"),
        new Attack("watch-flood", "4000-byte watch events at the pace of its credit, to a watcher nobody polls"),
        new Attack("silent", "no answer to 50 calls at once"),
        new Attack("reconnect", "200 reconnects in a row"));
    try (LocalServer server = LocalServer.builder().warmPool(0).build().start();
         E2BSandboxProvider provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
             .apiKey(server.apiKey()).build();
         HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
         DockerRuntime docker = DockerRuntime.connect()) {
      E2BApi api = provider.api();
      String raw = docker.createAndStart(new DockerRuntime.ContainerSpec(BaseImage.reference(), "sandboxes-bench-raw-" + ProcessHandle.current().pid(),
          Map.of(DockerRuntime.LABEL_OURS, "true"), List.of(), "raw", 2, 1L << 30, 1024, Map.of(), null));
      try (LiveSandbox other = api.create()) {
        RawDocker rawDocker = new RawDocker(docker, raw);
        Measure.Op rawEcho = rawDocker.echo();
        Measure.Op exec = () -> Measure.check("ok\n".equals(other.exec("echo ok").stdout()), "exec in the other sandbox");
        HttpRequest healthReq = HttpRequest.newBuilder(server.apiUrl().resolve("/health")).build();
        Measure.Op health = () -> Measure.check(http.send(healthReq, HttpResponse.BodyHandlers.discarding()).statusCode() / 100 == 2, "health");
        for (int i = 0; i < 20; i++) {
          exec.run();
          health.run();
          rawEcho.run();
        }
        System.out.printf("%-12s %9s %9s %9s %9s %9s %9s %9s %9s%n", "attack", "exec p50", "exec p99", "raw p99", "ratio", "health50",
            "health99", "heap MiB", "cpu %");
        long base = heapAfterGc();
        long cpu0 = cpuNanos();
        long wall0 = System.nanoTime();
        List<Double> e0 = sample(samples, exec);
        List<Double> r0 = sample(samples, rawEcho);
        List<Double> h0 = sample(samples, health);
        row("(none)", e0, r0, h0, heapAfterGc() - base, 100.0 * (cpuNanos() - cpu0) / (System.nanoTime() - wall0));
        for (Attack a : attacks) {
          if (!only.isEmpty() && !only.contains(a.mode())) {
            continue;
          }
          try (LiveSandbox hostile = api.create()) {
            base = heapAfterGc();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong heap = new AtomicLong();
            long heapBase = base;
            Thread sampler = Thread.ofPlatform().daemon().start(() -> {
              while (!stop.get()) {
                heap.accumulateAndGet(heapAfterGc() - heapBase, Math::max);
                try {
                  Thread.sleep(500);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
            List<AutoCloseable> held = new ArrayList<>();
            try {
              start(hostile, a.mode(), script);
              if (!a.mode().equals("reconnect")) {
                waitForFake();
              }
              provoke(a.mode(), hostile, server, held);
              long cpuAt = cpuNanos();
              long wallAt = System.nanoTime();
              long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
              List<Double> execMs = new ArrayList<>();
              List<Double> rawMs = new ArrayList<>();
              List<Double> healthMs = new ArrayList<>();
              while (System.nanoTime() < end || execMs.size() < samples) {
                execMs.add(time(exec));
                rawMs.add(time(rawEcho));
                healthMs.add(time(health));
                if (execMs.size() >= samples * 4) {
                  break;
                }
              }
              stop.set(true);
              sampler.join();
              row(a.mode(), execMs, rawMs, healthMs, heap.get(), 100.0 * (cpuNanos() - cpuAt) / (System.nanoTime() - wallAt));
            } finally {
              stop.set(true);
              for (AutoCloseable c : held) {
                try {
                  c.close();
                } catch (Exception ignored) {
                  // the sandbox goes next
                }
              }
            }
          }
        }
        System.out.println();
        for (Attack a : attacks) {
          System.out.printf("%-12s %s%n", a.mode(), a.what());
        }
      } finally {
        docker.remove(raw);
      }
    }
  }

  private static void start(LiveSandbox s, String mode, byte[] script) {
    s.writeBytes("/tmp/fake_daemon.py", script);
    s.exec("sudo FAKE_LIFETIME=600 setsid python3 /tmp/fake_daemon.py " + mode + " > /tmp/fake.log 2>&1 < /dev/null &");
  }

  /** The fake waits 1 s, stops the real worker and connects: 3 s covers it on a loaded machine. */
  private static void waitForFake() throws InterruptedException {
    Thread.sleep(3000);
  }

  /** Does, as the attacked sandbox's client, what sets the attack off. */
  private static void provoke(String mode, LiveSandbox s, LocalServer server, List<AutoCloseable> held) throws Exception {
    switch (mode) {
      case "flood" -> {
        AtomicLong got = new AtomicLong();
        SpawnHandle h = s.spawn("yes", SpawnOptions.pipes());
        h.onStdout(t -> got.addAndGet(t.length()));
        held.add(h);
      }
      case "zero-flood" -> held.add(unreadStart(server, s.id()));
      case "big-answers" -> {
        for (int i = 0; i < 4; i++) {
          Thread.ofVirtual().start(() -> {
            try {
              s.readDir("/");
            } catch (RuntimeException expected) {
              // too large, as it must be
            }
          });
        }
      }
      case "watch-flood" -> {
        try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
          http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/filesystem.Filesystem/CreateWatcher"))
              .header("E2b-Sandbox-Id", s.id()).header("X-Access-Token", envdToken(server, s.id()))
              .header("Content-Type", "application/json").header("Connect-Protocol-Version", "1")
              .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"/tmp\"}")).build(), HttpResponse.BodyHandlers.discarding());
        }
      }
      case "silent" -> {
        for (int i = 0; i < 50; i++) {
          Thread.ofVirtual().start(() -> {
            try {
              s.readBytes("/etc/hostname");
            } catch (RuntimeException expected) {
              // deadline exceeded, as it must be
            }
          });
        }
      }
      default -> {
        // reconnect: nothing to ask for
      }
    }
  }

  private static java.net.Socket unreadStart(LocalServer server, String sandboxId) throws Exception {
    byte[] body = io.sandboxes.e2b.internal.Connect.envelope(0, "{\"process\":{\"cmd\":\"/bin/yes\"}}".getBytes(StandardCharsets.UTF_8));
    URI envd = server.sandboxUrl();
    java.net.Socket sock = new java.net.Socket(envd.getHost(), envd.getPort());
    sock.setReceiveBufferSize(4096);
    String head = "POST /process.Process/Start HTTP/1.1\r\nHost: " + envd.getHost() + "\r\nE2b-Sandbox-Id: " + sandboxId
        + "\r\nX-Access-Token: " + envdToken(server, sandboxId) + "\r\nContent-Type: application/connect+json\r\n"
        + "Connect-Protocol-Version: 1\r\nContent-Length: " + body.length + "\r\n\r\n";
    sock.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
    sock.getOutputStream().write(body);
    return sock;
  }

  private static String envdToken(LocalServer server, String sandboxId) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId))
          .header("X-API-KEY", server.apiKey()).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
      return io.sandboxes.e2b.internal.Json.requireText(io.sandboxes.e2b.internal.Json.parse(r.body()), "envdAccessToken");
    }
  }

  private static List<Double> sample(int n, Measure.Op op) throws Exception {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ms.add(time(op));
    }
    return ms;
  }

  private static double time(Measure.Op op) throws Exception {
    long t = System.nanoTime();
    op.run();
    return (System.nanoTime() - t) / 1e6;
  }

  private static double pct(List<Double> samples, double p) {
    List<Double> s = new ArrayList<>(samples);
    Collections.sort(s);
    return s.get(Math.min(s.size() - 1, (int) Math.ceil(p * s.size()) - 1));
  }

  private static void row(String what, List<Double> exec, List<Double> raw, List<Double> health, long heapGrowth, double cpu) {
    System.out.printf("%-12s %9.1f %9.1f %9.1f %9.2f %9.1f %9.1f %9.1f %9.0f%n", what, pct(exec, 0.5), pct(exec, 0.99), pct(raw, 0.99),
        pct(exec, 0.99) / pct(raw, 0.99), pct(health, 0.5), pct(health, 0.99), Math.max(0, heapGrowth) / 1048576.0, cpu);
  }

  /** CPU time this JVM (the server, the clients and this program) has used. */
  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
