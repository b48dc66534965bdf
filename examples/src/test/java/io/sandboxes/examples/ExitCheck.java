package io.sandboxes.examples;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BSandboxProvider;

/** A program that uses the SDK and returns from main; {@link ExamplesTest} checks that its JVM then exits at once. */
public final class ExitCheck {
  private ExitCheck() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local(); Sandbox sandbox = sandboxes.create()) {
      System.out.println("exec: " + sandbox.exec("echo ok").stdout().strip());
      sandbox.spawn("sleep 600", io.sandboxes.SpawnOptions.pipes()).close();
    }
    System.out.println("main returning");
    System.out.flush();
  }
}
