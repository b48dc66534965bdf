package io.sandboxes.dsl;

import io.sandboxes.e2b.LiveSandbox;
import java.time.Duration;

/**
 * The child JVM of {@link SandboxesOutliveTest}: through plain {@code Sandboxes.local()} (the
 * parent sets {@code -Dsandboxes.local.background=true} and {@code SANDBOXES_STATE_DIR}), creates a
 * sandbox, writes a file into it, pauses it, prints its id and the server's URL, and exits.
 */
public final class OutliveChild {
  private OutliveChild() {}

  public static void main(String[] args) {
    String content = args[0];
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
}
