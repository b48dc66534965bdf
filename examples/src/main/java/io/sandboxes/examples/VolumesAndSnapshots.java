package io.sandboxes.examples;

import io.sandboxes.TemplateCommit;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.io.PrintStream;
import java.util.UUID;

/**
 * State that outlives a sandbox: a volume keeps data across sandboxes, and a snapshot turns a
 * sandbox's disk into a template new sandboxes boot from.
 */
public final class VolumesAndSnapshots {
  private VolumesAndSnapshots() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    E2BSandboxProvider provider = sandboxes.provider();
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String volume = "tour-data-" + suffix;
    String template = "tour-tools-" + suffix;
    provider.createVolume(volume);                               // idempotent: creates it once
    try {
      // First sandbox: data on the volume, a tool installed on its own disk, then a snapshot.
      sandboxes.sandbox().withVolume(volume, "/data").run(first -> {
        first.exec("echo 'written by the first sandbox' > /data/notes.txt").orThrow();
        first.writeFile("/home/user/bin/tool.sh", "echo 'tool from the snapshot'");
        provider.commitTemplate(TemplateCommit.of(first.id(), template));
        out.println("first sandbox wrote /data/notes.txt and was captured as template " + template);
      });
      // Second sandbox: booted from the snapshot, with the same volume mounted.
      sandboxes.sandbox().template(template).withVolume(volume, "/data").run(second -> {
        out.print("volume says: " + second.readFile("/data/notes.txt"));
        out.print("snapshot says: " + second.exec("sh /home/user/bin/tool.sh").stdout());
      });
    } finally {
      provider.removeTemplate(template);
      provider.removeVolume(volume);
      out.println("removed the template and the volume");
    }
  }
}
