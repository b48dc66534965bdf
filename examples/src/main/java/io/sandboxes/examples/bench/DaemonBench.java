package io.sandboxes.examples.bench;

import io.sandboxes.local.internal.daemon.DaemonBinary;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonListener;
import io.sandboxes.local.internal.daemon.DaemonProcess;
import io.sandboxes.local.internal.daemon.FileRead;
import io.sandboxes.local.internal.daemon.ProcessEvent;
import io.sandboxes.local.internal.daemon.ProcessSpec;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DaemonInjection;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
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
      String id = docker.createAndStart(DaemonInjection.withDaemon(spec, root.resolve("s"), binary));
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

  private static void run(DockerRuntime docker, String id, DaemonConnection c, int rounds) throws Exception {
    byte[] mib = new byte[MIB];
    new Random(1).nextBytes(mib);
    List<String> bashEcho = List.of("/bin/bash", "-l", "-c", ECHO);

    RawDocker raw = new RawDocker(docker, id);
    Measure.Op rawEcho = raw.echo();
    Measure.Op daemonEcho = () -> {
      try (DaemonProcess p = c.start(new ProcessSpec(bashEcho, Map.of(), null, null, null, false, null))) {
        Measure.check("hi\n".equals(p.collect().stdoutText()), "daemon echo");
      }
    };
    Measure.Op daemonPlainEcho = () -> {
      try (DaemonProcess p = c.start(ProcessSpec.of("/bin/echo", "hi"))) {
        Measure.check("hi\n".equals(p.collect().stdoutText()), "daemon echo");
      }
    };
    Measure.Op rawWrite = raw.write(mib);
    Measure.Op rawRead = raw.read(MIB);
    Measure.Op daemonWrite = () -> Measure.check(c.writeFile("/tmp/daemon.bin", "root", new ByteArrayInputStream(mib), null).size() == MIB,
        "daemon write");
    Measure.Op daemonRead = () -> {
      try (FileRead r = c.readFile("/tmp/daemon.bin", "root")) {
        Measure.check(r.readAllBytes().length == MIB, "daemon read");
      }
    };
    List<String> head = List.of("head", "-c", Long.toString(STDOUT_BYTES), "/dev/zero");
    Measure.Op rawStdout = raw.stdout(STDOUT_BYTES);
    Measure.Op daemonStdout = () -> {
      try (DaemonProcess p = c.start(new ProcessSpec(head, Map.of(), null, null, null, false, null))) {
        long n = 0;
        ProcessEvent e;
        while ((e = p.next()) != null) {
          if (e instanceof ProcessEvent.Output o) {
            n += o.data().length;
          }
        }
        Measure.check(n == STDOUT_BYTES, "daemon stdout " + n);
      }
    };

    double rEcho = Measure.medianMs(rounds, rawEcho);
    double dEcho = Measure.medianMs(rounds, daemonEcho);
    double dPlain = Measure.medianMs(rounds, daemonPlainEcho);
    double rWrite = Measure.medianMs(rounds, rawWrite);
    double dWrite = Measure.medianMs(rounds, daemonWrite);
    double rRead = Measure.medianMs(rounds, rawRead);
    double dRead = Measure.medianMs(rounds, daemonRead);
    int big = Math.max(3, rounds / 6);
    double rOut = STDOUT_BYTES / 1e6 / (Measure.medianMs(big, rawStdout) / 1e3);
    double dOut = STDOUT_BYTES / 1e6 / (Measure.medianMs(big, daemonStdout) / 1e3);
    double rPar = Measure.perSecond(80, 8, rawEcho);
    double dPar = Measure.perSecond(800, 8, daemonEcho);

    Measure.header("daemon");
    Measure.row("exec bash -l -c 'echo hi' (ms)", rEcho, dEcho);
    Measure.row("exec /bin/echo hi, daemon (ms; vs raw bash -l)", rEcho, dPlain);
    Measure.row("write 1 MiB (ms; raw: exec sh -c 'cat >')", rWrite, dWrite);
    Measure.row("read 1 MiB (ms; raw: exec cat)", rRead, dRead);
    Measure.row("50 MB stdout (MB/s)", rOut, dOut);
    Measure.row("8 in parallel, bash -l -c 'echo hi' (execs/s)", rPar, dPar);
  }
}
