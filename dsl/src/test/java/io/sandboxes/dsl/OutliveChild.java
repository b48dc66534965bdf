package io.sandboxes.dsl;

import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The child JVM of {@link SandboxesOutliveTest}, in one of two modes.
 *
 * <p>{@code pause CONTENT}: through plain {@code Sandboxes.local()} (the parent sets
 * {@code -Dsandboxes.local.background=true} and {@code SANDBOXES_STATE_DIR}), creates a sandbox,
 * writes a file into it, pauses it, prints its id and the server's URL, and exits.
 *
 * <p>{@code exit}: starts a server in this JVM, creates a sandbox, waits until the warm pool has
 * its two members, prints the server's id, and exits without closing anything.
 */
public final class OutliveChild {
  private OutliveChild() {}

  public static void main(String[] args) throws Exception {
    if (args[0].equals("exit")) {
      SandboxClient sandboxes = Sandboxes.local(o -> o.reuse(false));
      LiveSandbox sandbox = sandboxes.sandbox().create();
      String server = docker("ps", "--filter", "name=" + sandbox.id(), "--format", "{{.Label \"io.sandboxes.server\"}}").get(0);
      long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (docker("ps", "--filter", "label=io.sandboxes.server=" + server, "--filter", "name=sandboxes-pool-", "--format",
          "{{.Names}}").size() < 2 && System.nanoTime() < until) {
        Thread.sleep(200);
      }
      System.out.println("id=" + sandbox.id());
      System.out.println("server=" + server);
      System.out.println("seen=" + docker("ps", "--filter", "label=io.sandboxes.server=" + server, "--filter",
          "label=io.sandboxes.local=true", "--format", "{{.Names}}").size());
      System.exit(0);
    }
    String content = args[1];
    try (SandboxClient sandboxes = Sandboxes.local()) {
      LiveSandbox sandbox = sandboxes.sandbox().timeout(Duration.ofMinutes(10)).create();
      sandbox.writeFile("/home/user/kept.txt", content);
      if (!sandbox.pause()) {
        throw new IllegalStateException("pause said the sandbox was not running");
      }
      System.out.println("id=" + sandbox.id());
      System.out.println("api=" + sandboxes.provider().apiUrl());
      System.out.println("reach=" + sandboxes.howToReach(sandbox.id()));
    }
    System.exit(0);
  }

  static List<String> docker(String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("docker"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException("docker " + String.join(" ", args) + ": " + out);
    }
    return out.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }
}
