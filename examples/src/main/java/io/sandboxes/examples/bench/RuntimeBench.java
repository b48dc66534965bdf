package io.sandboxes.examples.bench;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What gVisor costs: the same figures on two servers in one run, one whose sandboxes run on runc
 * and one on gVisor's {@code runsc}, each beside raw Docker on the same runtime. Creates (request
 * to handle, then the first exec) alternate between the two runtimes, each right after a raw
 * create+start on the same runtime, so a drifting load on a shared machine skews neither; then an
 * {@code echo} round trip on a running sandbox of each beside a raw {@code docker exec bash -l -c}
 * into a running container of each. Prints medians in milliseconds, the runsc/runc ratio of each
 * figure, and each server's ratio to raw Docker on its own runtime. Needs Docker to know runsc
 * (registered by {@code scripts/docker-up.sh --runsc}). Not a test: figures vary with the machine; compare the
 * ratios.
 *
 * <p>{@code SANDBOXES_RUNSC=1 scripts/run-examples.sh bench.RuntimeBench [creates] [echoes]} (the variable has
 * docker-up.sh register runsc)
 */
public final class RuntimeBench {
  private RuntimeBench() {}

  private static final List<String> RUNTIMES = List.of("runc", "runsc");

  /** One runtime's server, client, raw Docker, and what was measured on it. */
  private static final class Side implements AutoCloseable {
    final String runtime;
    final LocalServer server;
    final E2BSandboxProvider provider;
    final E2BApi api;
    final DockerRuntime docker;
    final List<Double> rawCreate = new ArrayList<>();
    final List<Double> create = new ArrayList<>();
    final List<Double> firstExec = new ArrayList<>();
    final List<Double> rawEcho = new ArrayList<>();
    final List<Double> echo = new ArrayList<>();

    Side(String runtime) {
      this.runtime = runtime;
      // no warm pool: every create starts a container on this runtime
      this.server = LocalServer.builder().runtime(runtime).warmPool(0).build().start();
      this.provider = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey())
          .build();
      this.api = provider.api();
      this.docker = DockerRuntime.connect(runtime);
    }

    @Override
    public void close() {
      provider.close();
      server.close();
      docker.close();
    }
  }

  public static void main(String[] args) throws Exception {
    int creates = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int echoes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    List<Side> sides = new ArrayList<>();
    try {
      for (String runtime : RUNTIMES) {
        sides.add(new Side(runtime));
      }
      // warm-up: each runtime's first container, JIT, connection pools
      for (Side s : sides) {
        s.docker.remove(s.docker.createAndStart(rawSpec()));
        try (LiveSandbox warm = s.api.create()) {
          for (int i = 0; i < 5; i++) {
            Measure.check(warm.exec("echo warm").stdout().equals("warm\n"), "warm-up echo on " + s.runtime);
          }
        }
      }
      for (int i = 0; i < creates; i++) {
        for (Side s : sides) {
          long r0 = System.nanoTime();
          String raw = s.docker.createAndStart(rawSpec());
          s.rawCreate.add(ms(System.nanoTime() - r0));
          s.docker.remove(raw);
          long t0 = System.nanoTime();
          LiveSandbox sandbox = s.api.create();
          long t1 = System.nanoTime();
          Measure.check(sandbox.exec("echo first").stdout().equals("first\n"), "first exec on " + s.runtime);
          long t2 = System.nanoTime();
          sandbox.close();
          s.create.add(ms(t1 - t0));
          s.firstExec.add(ms(t2 - t1));
        }
      }
      List<String> rawIds = new ArrayList<>();
      List<LiveSandbox> running = new ArrayList<>();
      try {
        for (Side s : sides) {
          rawIds.add(s.docker.createAndStart(rawSpec()));
          running.add(s.api.create());
        }
        // in chunks of ten, alternating, for the same reason as the creates
        for (int done = 0; done < echoes; done += 10) {
          for (int k = 0; k < sides.size(); k++) {
            Side s = sides.get(k);
            Measure.Op rawEcho = new RawDocker(s.docker, rawIds.get(k)).echo();
            LiveSandbox sandbox = running.get(k);
            for (int j = 0; j < 10; j++) {
              long t0 = System.nanoTime();
              rawEcho.run();
              s.rawEcho.add(ms(System.nanoTime() - t0));
              long t1 = System.nanoTime();
              Measure.check(sandbox.exec("echo hi").stdout().equals("hi\n"), "echo on " + s.runtime);
              s.echo.add(ms(System.nanoTime() - t1));
            }
          }
        }
      } finally {
        running.forEach(LiveSandbox::close);
        for (int k = 0; k < rawIds.size(); k++) {
          sides.get(k).docker.remove(rawIds.get(k));
        }
      }
      report(sides.get(0), sides.get(1), creates, echoes);
    } finally {
      sides.forEach(Side::close);
    }
  }

  private static void report(Side runc, Side runsc, int creates, int echoes) {
    System.out.printf("runc vs gVisor (runsc), medians in ms; %d creates and %d echoes on each, alternating%n", creates, echoes);
    System.out.printf("%-46s %10s %10s %11s%n", "figure", "runc", "runsc", "runsc/runc");
    row("raw docker create+start (network none)", runc.rawCreate, runsc.rawCreate);
    row("create (request to handle)", runc.create, runsc.create);
    row("first exec after create", runc.firstExec, runsc.firstExec);
    row("create + first exec", sum(runc.create, runc.firstExec), sum(runsc.create, runsc.firstExec));
    row("raw docker exec bash -l -c 'echo hi'", runc.rawEcho, runsc.rawEcho);
    row("echo round trip (exec through the server)", runc.echo, runsc.echo);
    System.out.println();
    System.out.printf("%-46s %10s %10s%n", "ours / raw docker on the same runtime", "runc", "runsc");
    System.out.printf("%-46s %9.2fx %9.2fx%n", "create / raw create+start", Measure.median(runc.create) / Measure.median(runc.rawCreate),
        Measure.median(runsc.create) / Measure.median(runsc.rawCreate));
    System.out.printf("%-46s %9.2fx %9.2fx%n", "echo round trip / raw exec", Measure.median(runc.echo) / Measure.median(runc.rawEcho),
        Measure.median(runsc.echo) / Measure.median(runsc.rawEcho));
  }

  private static void row(String what, List<Double> runc, List<Double> runsc) {
    double a = Measure.median(runc);
    double b = Measure.median(runsc);
    System.out.printf("%-46s %10.1f %10.1f %10.2fx%n", what, a, b, b / a);
  }

  private static List<Double> sum(List<Double> a, List<Double> b) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < a.size(); i++) {
      out.add(a.get(i) + b.get(i));
    }
    return out;
  }

  /** A container like a sandbox's (same image, limits, no network), labelled so cleanup finds it. */
  private static DockerRuntime.ContainerSpec rawSpec() {
    String name = "sandboxes-raw-baseline-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    return new DockerRuntime.ContainerSpec(BaseImage.reference(), name, Map.of(DockerRuntime.LABEL_OURS, "true"), List.of(), name, 2,
        1L << 30, 1024, Map.of(), null);
  }

  private static double ms(long nanos) {
    return nanos / 1_000_000.0;
  }
}
