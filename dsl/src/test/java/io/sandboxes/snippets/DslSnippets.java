package io.sandboxes.snippets;

import io.sandboxes.ExecResult;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxState;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxRequest;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.Template;
import java.time.Duration;
import java.util.List;

/**
 * The code examples in the DSL's Javadoc. Each {@code {@snippet class=... region=...}} there
 * shows a region of this file, and javadoc fails when its inline copy differs from the region;
 * this file is compiled with the tests, so an example that calls a method that does not exist
 * fails the build. Every example here starts sandboxes, so they are compiled, not run (the
 * module's tests exercise the same calls against the local runtime).
 */
final class DslSnippets {
  private DslSnippets() {}

  static void sandboxes() {
    // @start region="sandboxes" :
    try (SandboxClient sandboxes = Sandboxes.local();               // Docker on this machine
         LiveSandbox sandbox = sandboxes.sandbox().timeout(Duration.ofMinutes(10)).create()) {
      System.out.println(sandbox.exec("python3 -c 'print(6 * 7)'").stdout());
    }
    // @end
  }

  static void sandboxClient() {
    // @start region="sandbox-client" :
    try (SandboxClient sandboxes = Sandboxes.local()) {
      System.out.println(sandboxes.sandbox().exec("python3 -c 'print(6 * 7)'").stdout());
    }
    // @end
  }

  static void buildTemplate(SandboxClient sandboxes, java.nio.file.Path project) {
    // @start region="build-template" :
    Template tools = Template.fromTemplate("base")
        .withContextDir(project)                          // copy() reads from here
        .copy("greet.sh", "/home/user/greet.sh", CopyOptions.defaults().withMode(0755))
        .runCmd("echo built-by-$(id -un) > /home/user/built.txt");
    BuildInfo built = sandboxes.buildTemplate(tools, "greeter", line -> System.out.println(line.message()));
    try (LiveSandbox sandbox = sandboxes.sandbox().template(built).create()) {
      System.out.print(sandbox.exec("/home/user/greet.sh").stdout());
    }
    // @end
  }

  static List<SandboxInfo> list(SandboxClient sandboxes) {
    // @start region="list" :
    List<SandboxInfo> paused = sandboxes.list(SandboxQuery.inState(SandboxState.PAUSED));
    List<SandboxInfo> mine = sandboxes.list(SandboxQuery.byMetadata("projectId", "p-42"));
    // @end
    return mine.isEmpty() ? paused : mine;
  }

  static ExecResult sandboxRequest(SandboxClient sandboxes) {
    // @start region="sandbox-request" :
    SandboxRequest build = sandboxes.sandbox()
        .template("base")
        .timeout(Duration.ofMinutes(10))
        .env("CI", "true")
        .withVolume("proj-42", "/workspace/app")
        .allowOut("pypi.org", "*.pythonhosted.org");

    ExecResult once = build.exec("make -C /workspace/app");   // fresh sandbox, destroyed after
    try (LiveSandbox live = build.create()) {                  // a live sandbox, killed on close
      live.exec("make -C /workspace/app");
    }
    build.run(sandbox -> sandbox.exec("pytest"));              // scoped: closed for you
    // @end
    return once;
  }
}
