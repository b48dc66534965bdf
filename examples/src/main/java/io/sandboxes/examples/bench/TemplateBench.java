package io.sandboxes.examples.bench;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.Template;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Measures template builds on the local runtime through the Java builder and the real server:
 * a small build (base, a copied file, a RUN, env and workdir) first and then unchanged (the step
 * cache; the issue's target is 2 s or less), and {@code base} plus {@code aptInstall("git")}
 * (its packages come from the Debian mirror the base image is built from, so it needs that
 * mirror). Each build's template is deleted after. Not a test.
 *
 * <p>{@code scripts/run-examples.sh bench.TemplateBench [--no-apt]}
 */
public final class TemplateBench {
  private TemplateBench() {}

  public static void main(String[] args) throws Exception {
    boolean apt = !(args.length > 0 && args[0].equals("--no-apt"));
    Path context = Files.createTempDirectory("template-bench-");
    Files.writeString(context.resolve("hello.sh"), "echo hello from the template\n");
    try (SandboxClient sandboxes = Sandboxes.local()) {
      String name = "bench-small-" + UUID.randomUUID().toString().substring(0, 8);
      Template small = Template.fromTemplate("base").withContextDir(context)
          .copy("hello.sh", "/opt/bench/hello.sh")
          .runCmd("bash /opt/bench/hello.sh > /opt/bench/said.txt")
          .setEnv("BENCH", "1")
          .setWorkdir("/opt/bench");
      try {
        time("small build, first", () -> sandboxes.buildTemplate(small, name, line -> { }));
        for (int i = 1; i <= 3; i++) {
          AtomicInteger cached = new AtomicInteger();
          time("small build, unchanged #" + i + " (steps cached: see below)", () -> sandboxes.buildTemplate(small, name, line -> {
            if (line.message().contains("CACHED")) {
              cached.incrementAndGet();
            }
          }));
          System.out.printf("%-50s %12d%n", "  log lines saying CACHED", cached.get());
        }
      } finally {
        sandboxes.deleteTemplate(name);
      }
      if (apt) {
        String git = "bench-git-" + UUID.randomUUID().toString().substring(0, 8);
        try {
          time("base + aptInstall git, first", () -> sandboxes.buildTemplate(Template.fromTemplate("base").aptInstall("git"), git,
              line -> { }));
        } finally {
          sandboxes.deleteTemplate(git);
        }
      }
    }
  }

  private interface Build {
    BuildInfo run();
  }

  private static void time(String what, Build build) {
    long t0 = System.nanoTime();
    build.run();
    System.out.printf("%-50s %12.2f s%n", what, (System.nanoTime() - t0) / 1e9);
  }
}
