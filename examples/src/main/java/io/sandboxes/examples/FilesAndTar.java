package io.sandboxes.examples;

import io.sandboxes.ExecResult;
import io.sandboxes.Tars;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Files and tar: push a project folder into a sandbox, run its build there, and pull the
 * artefacts back.
 */
public final class FilesAndTar {
  private FilesAndTar() {}

  public static void main(String[] args) {
    try (SandboxClient sandboxes = Sandboxes.local()) {
      run(sandboxes, System.out);
    }
  }

  static void run(SandboxClient sandboxes, PrintStream out) {
    try {
      // A tiny "project" on this machine: one source file and a build script.
      Path work = Files.createTempDirectory("files-and-tar-");
      Path project = Files.createDirectories(work.resolve("greeter"));
      Files.writeString(project.resolve("greet.py"), "import sys\nprint('hello,', sys.argv[1])\n");
      Files.writeString(project.resolve("build.sh"), "mkdir -p dist && python3 greet.py build > dist/greeting.txt && date -u +%Y > dist/year.txt\n");

      sandboxes.sandbox().run(sandbox -> {
        // Tars.pack roots the archive at the folder's name: it lands as /home/user/greeter/...
        sandbox.importFiles("/home/user", Tars.pack(project));
        out.println("pushed " + sandbox.readDir("/home/user/greeter").size() + " entries to /home/user/greeter");

        ExecResult build = sandbox.exec("cd /home/user/greeter && sh build.sh");
        out.println("build exit code " + build.exitCode());

        // exportFiles is rooted at the last path segment too: entries come back as dist/...
        var files = Tars.unpack(sandbox.exportFiles("/home/user/greeter/dist"), work.resolve("artefacts"));
        out.println("pulled back " + files.size() + " entries");
        out.print("dist/greeting.txt says: " + read(work.resolve("artefacts/dist/greeting.txt")));
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

}
