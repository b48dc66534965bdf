package io.sandboxes.examples;

import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.PrintStream;

/**
 * The README's main job: every example in turn, against one local runtime.
 */
public final class Tour {
  private Tour() {}

  public static void main(String[] args) {
    PrintStream out = System.out;
    out.println("== starting the local runtime (Docker; the first run builds the base image)");
    try (SandboxClient sandboxes = Sandboxes.local()) {
      out.println("== Hello");
      Hello.run(sandboxes, out);
      out.println("== Files and tar");
      FilesAndTar.run(sandboxes, out);
      out.println("== Terminal");
      Terminal.run(sandboxes, out);
      out.println("== Volumes and snapshots");
      VolumesAndSnapshots.run(sandboxes, out);
      out.println("== Code interpreter");
      CodeInterpreter.run(sandboxes, out);
      out.println("== Egress report");
      EgressReport.run(sandboxes, out);
    }
    out.println("== tour done");
  }
}
