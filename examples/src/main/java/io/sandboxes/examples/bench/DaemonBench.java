package io.sandboxes.examples.bench;

import io.sandboxes.local.internal.daemon.DaemonBinary;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonListener;
import io.sandboxes.local.internal.daemon.DaemonMounts;
import io.sandboxes.local.internal.daemon.DaemonProcess;
import io.sandboxes.local.internal.daemon.FileRead;
import io.sandboxes.local.internal.daemon.ProcessEvent;
import io.sandboxes.local.internal.daemon.ProcessSpec;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * Measures the in-sandbox daemon (not yet used by the runtime) against raw Docker in the same
 * run, on one container of the base image: an exec round trip, a 1 MiB write and read, 50 MB of
 * stdout, and 8 commands in parallel. Raw Docker is DockerRuntime's own exec (create, start over
 * a hijacked connection, inspect for the exit code), the path the runtime takes today.
 * Prints medians and each daemon figure as a ratio to its baseline. Not a test.
 *
 * <p>{@code scripts/run-examples.sh bench.DaemonBench [rounds]}
 */
public final class DaemonBench {
  private DaemonBench() {}

  private static final String ECHO = "echo hi";
  private static final int MIB = 1 << 20;
  private static final long STDOUT_BYTES = 50_000_000L;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
    DockerRuntime docker = DockerRuntime.connect();
    BaseImage.ensure(docker, System.out::println);
    Path root = Files.createTempDirectory(Path.of("/tmp"), "sbxbench-");
    Path binary = DaemonBinary.install(root.resolve("bin"));
    String name = "sandboxes-daemon-bench-" + UUID.randomUUID().toString().substring(0, 8);
    DockerRuntime.ContainerSpec spec = new DockerRuntime.ContainerSpec(BaseImage.reference(), name,
        Map.of(DockerRuntime.LABEL_OURS, "true"), List.of(), name, 2, 1L << 30, 1024, Map.of(), null);
    try (DaemonListener listener = DaemonListener.open(root.resolve("s"))) {
      String id = docker.createAndStart(DaemonMounts.withDaemon(spec, root.resolve("s"), binary));
      try {
        DaemonConnection c = listener.awaitConnection(Duration.ofSeconds(20));
        run(docker, id, c, rounds);
      } finally {
        docker.remove(id);
      }
    } finally {
      try (Stream<Path> s = Files.walk(root)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private interface Op {
    void run() throws Exception;
  }

  private static double medianMs(int n, Op op) throws Exception {
    for (int i = 0; i < Math.max(3, n / 10); i++) {
      op.run(); // warm-up
    }
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      op.run();
      ms.add((System.nanoTime() - t) / 1e6);
    }
    Collections.sort(ms);
    return ms.get(ms.size() / 2);
  }

  private static double perSecond(int total, int parallel, Op op) throws Exception {
    for (int i = 0; i < parallel; i++) {
      op.run();
    }
    try (ExecutorService pool = Executors.newFixedThreadPool(parallel)) {
      long t = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        done.add(pool.submit(() -> {
          op.run();
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      return total / ((System.nanoTime() - t) / 1e9);
    }
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  private static void run(DockerRuntime docker, String id, DaemonConnection c, int rounds) throws Exception {
    byte[] mib = new byte[MIB];
    new Random(1).nextBytes(mib);
    List<String> bashEcho = List.of("/bin/bash", "-l", "-c", ECHO);

    Op rawEcho = () -> check("hi\n".equals(docker.run(id, "root", bashEcho, null).stdoutText()), "raw echo");
    Op daemonEcho = () -> {
      try (DaemonProcess p = c.start(new ProcessSpec(bashEcho, Map.of(), null, null, null, false, null))) {
        check("hi\n".equals(p.collect().stdoutText()), "daemon echo");
      }
    };
    Op daemonPlainEcho = () -> {
      try (DaemonProcess p = c.start(ProcessSpec.of("/bin/echo", "hi"))) {
        check("hi\n".equals(p.collect().stdoutText()), "daemon echo");
      }
    };
    Op rawWrite = () -> check(docker.run(id, "root", List.of("sh", "-c", "cat > /tmp/raw.bin"), new ByteArrayInputStream(mib))
        .exitCode() == 0, "raw write");
    Op rawRead = () -> check(docker.run(id, "root", List.of("cat", "/tmp/raw.bin"), null).stdout().length == MIB, "raw read");
    Op daemonWrite = () -> check(c.writeFile("/tmp/daemon.bin", "root", new ByteArrayInputStream(mib), null).size() == MIB,
        "daemon write");
    Op daemonRead = () -> {
      try (FileRead r = c.readFile("/tmp/daemon.bin", "root")) {
        check(r.readAllBytes().length == MIB, "daemon read");
      }
    };
    List<String> head = List.of("head", "-c", Long.toString(STDOUT_BYTES), "/dev/zero");
    Op rawStdout = () -> check(docker.run(id, "root", head, null).stdout().length == STDOUT_BYTES, "raw stdout");
    Op daemonStdout = () -> {
      try (DaemonProcess p = c.start(new ProcessSpec(head, Map.of(), null, null, null, false, null))) {
        long n = 0;
        ProcessEvent e;
        while ((e = p.next()) != null) {
          if (e instanceof ProcessEvent.Output o) {
            n += o.data().length;
          }
        }
        check(n == STDOUT_BYTES, "daemon stdout " + n);
      }
    };

    double rEcho = medianMs(rounds, rawEcho);
    double dEcho = medianMs(rounds, daemonEcho);
    double dPlain = medianMs(rounds, daemonPlainEcho);
    double rWrite = medianMs(rounds, rawWrite);
    double dWrite = medianMs(rounds, daemonWrite);
    double rRead = medianMs(rounds, rawRead);
    double dRead = medianMs(rounds, daemonRead);
    int big = Math.max(3, rounds / 6);
    double rOut = STDOUT_BYTES / 1e6 / (medianMs(big, rawStdout) / 1e3);
    double dOut = STDOUT_BYTES / 1e6 / (medianMs(big, daemonStdout) / 1e3);
    double rPar = perSecond(80, 8, rawEcho);
    double dPar = perSecond(800, 8, daemonEcho);

    System.out.printf("%-46s %12s %12s %8s%n", "figure (median; same container, same run)", "raw docker", "daemon", "ratio");
    row("exec bash -l -c 'echo hi' (ms)", rEcho, dEcho);
    row("exec /bin/echo hi, daemon (ms; vs raw bash -l)", rEcho, dPlain);
    row("write 1 MiB (ms; raw: exec sh -c 'cat >')", rWrite, dWrite);
    row("read 1 MiB (ms; raw: exec cat)", rRead, dRead);
    row("50 MB stdout (MB/s)", rOut, dOut);
    row("8 in parallel, bash -l -c 'echo hi' (execs/s)", rPar, dPar);
  }

  private static void row(String what, double raw, double daemon) {
    System.out.printf("%-46s %12.2f %12.2f %7.2fx%n", what, raw, daemon, daemon / raw);
  }
}
