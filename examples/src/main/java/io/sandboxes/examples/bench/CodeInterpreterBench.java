package io.sandboxes.examples.bench;

import io.sandboxes.CodeContext;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.CodeInterpreterImage;
import io.sandboxes.local.internal.docker.DockerRuntime;

/**
 * Measures the code interpreter on the local runtime, in one run: {@code runCode("1+1")} on a
 * warm context (the target is 30 ms or less) beside an exec round trip ({@code true}) on the same
 * sandbox, both through the Java SDK and the real server; also the create of a code-interpreter
 * sandbox (container, bridge, first kernel) and, when the image is missing, its build. Not a test.
 *
 * <p>{@code scripts/run-examples.sh bench.CodeInterpreterBench [rounds]}
 */
public final class CodeInterpreterBench {
  private CodeInterpreterBench() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 50;
    try (DockerRuntime docker = DockerRuntime.connect()) {
      String base = BaseImage.ensure(docker, System.out::println);
      boolean built = !docker.imageExists(CodeInterpreterImage.reference(base));
      long t0 = System.nanoTime();
      CodeInterpreterImage.ensure(docker, base, System.out::println);
      System.out.printf("%-50s %12.1f s%s%n", "code interpreter image", (System.nanoTime() - t0) / 1e9,
          built ? " (built now)" : " (already built: lookup only)");
    }
    try (SandboxClient sandboxes = Sandboxes.local()) {
      long t0 = System.nanoTime();
      try (LiveSandbox sandbox = sandboxes.sandbox().codeInterpreter().create()) {
        System.out.printf("%-50s %12.1f ms%n", "create (container, bridge, first kernel)", (System.nanoTime() - t0) / 1e6);
        double exec = Measure.medianMs(rounds, () -> Measure.check(sandbox.exec("true").exitCode() == 0, "exec"));
        double run = Measure.medianMs(rounds, () -> Measure.check("2".equals(sandbox.runCode("1+1").text()), "runCode"));
        CodeContext ctx = sandbox.createCodeContext();
        RunCodeOptions inCtx = RunCodeOptions.defaults().inContext(ctx);
        double runCtx = Measure.medianMs(rounds, () -> Measure.check("2".equals(sandbox.runCode("1+1", inCtx).text()), "runCode"));
        System.out.printf("%-50s %12.2f ms%n", "exec(\"true\") round trip (median of " + rounds + ")", exec);
        System.out.printf("%-50s %12.2f ms%n", "runCode(\"1+1\"), default context (median)", run);
        System.out.printf("%-50s %12.2f ms%n", "runCode(\"1+1\"), created context (median)", runCtx);
        System.out.printf("%-50s %12s%n", "target for runCode on a warm context", "<= 30 ms");
      }
    }
  }
}
