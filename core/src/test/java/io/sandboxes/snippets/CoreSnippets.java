package io.sandboxes.snippets;

import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxProvider;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.Tars;
import io.sandboxes.SandboxRateLimitException;
import io.sandboxes.SandboxServiceBusyException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.E2BTemplates;
import io.sandboxes.e2b.EntryInfo;
import io.sandboxes.e2b.Filesystem;
import io.sandboxes.e2b.CallOptions;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.ProcessInfo;
import io.sandboxes.e2b.PtyOptions;
import io.sandboxes.e2b.SandboxPage;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.e2b.SnapshotPage;
import io.sandboxes.e2b.SnapshotQuery;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.Template;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The code examples in core's Javadoc. Each {@code {@snippet class=... region=...}} there shows a
 * region of this file, and javadoc fails when its inline copy differs from the region; this file
 * is compiled with the tests, so an example that calls a method that does not exist fails the
 * build. Examples that need a sandbox take what they need as a parameter and are compiled, not
 * run; {@link CoreSnippetsTest} runs the ones that only build values.
 */
final class CoreSnippets {
  private CoreSnippets() {}

  static void sandbox(SandboxProvider provider) {
    // @start region="sandbox" :
    try (Sandbox sandbox = provider.create(SandboxConfig.forProject("demo"))) {
      sandbox.writeFile("/home/user/hello.py", "print('hi')");
      ExecResult result = sandbox.exec("python3 /home/user/hello.py");
      System.out.println(result.stdout());
    }
    // @end
  }

  static void execOptions(Sandbox sandbox) {
    // @start region="exec-options" :
    sandbox.exec("make test", ExecOptions.defaults()
        .withCwd("/home/user/app")
        .withTimeout(Duration.ofMinutes(5))
        .onStdout(System.out::print)      // follow a long build live
        .onStderr(System.err::print));
    // @end
  }

  static void commands(LiveSandbox sandbox) {
    // @start region="commands" :
    CommandHandle server = sandbox.commands().start("python3 -m http.server 8000",
        ExecOptions.defaults().withTimeout(Duration.ZERO));   // no deadline: runs until killed
    int pid = server.pid();
    server.disconnect();                                     // it keeps running
    // later, from this JVM or another one connected to the same sandbox:
    for (ProcessInfo p : sandbox.commands().list()) {
      System.out.println(p.pid() + " " + p.args());
    }
    boolean wasRunning = sandbox.commands().kill(pid);       // false when it had ended
    // @end
  }

  static void network(LiveSandbox sandbox) {
    // @start region="network" :
    sandbox.network().update(SandboxNetwork.allowOnly("api.example.com"));
    sandbox.network().current().ifPresent(n -> System.out.println(n.allowOut()));
    // @end
  }

  static void files(LiveSandbox sandbox) throws IOException {
    // @start region="files" :
    Filesystem files = sandbox.files();
    files.write("/home/user/data/in.csv", "a,b\n1,2\n");
    try (InputStream big = Files.newInputStream(Path.of("model.bin"))) {
      files.write("/home/user/model.bin", big);              // streamed, never held whole
    }
    for (EntryInfo e : files.list("/home/user", 2)) {
      System.out.println(e.path() + " " + e.type() + " " + e.size() + " " + e.permissions());
    }
    try (InputStream in = files.readStream("/home/user/model.bin")) {
      in.transferTo(OutputStream.nullOutputStream());
    }
    // @end
  }

  static void templates(E2BApi e2b) {
    // @start region="templates" :
    E2BTemplates templates = e2b.templates();
    BuildInfo started = templates.buildInBackground(Template.fromTemplate("base").aptInstall("git"), "with-git");
    BuildStatus status = templates.buildStatus(started, 0);   // WAITING, BUILDING, READY or ERROR
    templates.assignTags("with-git:default", List.of("stable"));
    // @end
  }

  static void pty(LiveSandbox sandbox) {
    // @start region="pty" :
    CommandHandle shell = sandbox.pty().create(PtyOptions.of(80, 24).withCwd("/tmp")
        .withOnData(System.out::print));
    sandbox.pty().sendInput(shell.pid(), "ls -la\n");
    sandbox.pty().resize(shell.pid(), 120, 40);
    sandbox.pty().kill(shell.pid());
    // @end
  }

  static void commandTimeout(Sandbox sandbox) {
    // @start region="command-timeout" :
    try {
      sandbox.exec("make", ExecOptions.defaults().withTimeout(Duration.ofMinutes(2)));
    } catch (CommandTimeoutException e) {
      System.err.println("make hung after: " + e.stdout());
    }
    // @end
  }

  static SandboxConfig sandboxConfig() {
    // @start region="sandbox-config" :
    SandboxConfig config = SandboxConfig.forProject("p1")
        .withEnv(Map.of("A", "1"))
        .withLabels(Map.of("team", "x"))
        .withVolume("mol-project-p1", "/workspace/my-app");
    // @end
    return config;
  }

  static SandboxSpec sandboxSpec() {
    // @start region="sandbox-spec" :
    SandboxSpec spec = SandboxSpec.of("base")
        .withTimeout(Duration.ofMinutes(10))
        .withMetadata(Map.of("team", "infra"));
    // @end
    return spec;
  }

  static SandboxSpec sandboxNetwork() {
    // @start region="sandbox-network" :
    SandboxSpec spec = SandboxSpec.of("base")
        .withNetwork(SandboxNetwork.allowOnly("pypi.org", "*.pythonhosted.org"));
    // @end
    return spec;
  }

  static void tars(Sandbox sandbox) {
    // @start region="tars" :
    sandbox.importFiles("/home/user", Tars.pack(Path.of("my-app")));          // -> /home/user/my-app/...
    Tars.unpack(sandbox.exportFiles("/home/user/my-app/dist"), Path.of("out")); // -> out/dist/...
    // @end
  }

  static void e2bProvider() {
    // @start region="e2b-provider" :
    try (E2BSandboxProvider e2b = E2BSandboxProvider.fromEnvironment();
         LiveSandbox sandbox = e2b.api().create(SandboxSpec.defaults())) {
      System.out.println(sandbox.exec("uname -a").stdout());
    }
    // @end
  }

  static void perCall(E2BSandboxProvider e2b) {
    // @start region="per-call" :
    SandboxPage page = e2b.api().withRequestTimeout(Duration.ofSeconds(5)).list(SandboxQuery.all());
    // @end
  }

  static void accounts(String teamKey, String otherKey) {
    // @start region="accounts" :
    try (E2BSandboxProvider team = E2BSandboxProvider.builder().apiKey(teamKey).retries(5).build();
         E2BSandboxProvider other = E2BSandboxProvider.builder().apiKey(otherKey).environment(Map.of()).build()) {
      try (LiveSandbox sandbox = team.api().create()) {
        System.out.println(sandbox.exec("echo on the first account").stdout());
      } catch (SandboxRateLimitException e) {   // still 429 after 5 retries within the request timeout
        System.out.println("rate limited; wait " + e.retryAfter().orElse(Duration.ofSeconds(1)));
      } catch (SandboxServiceBusyException e) { // 503: nothing was created, try again shortly
        System.out.println("busy: " + e.serverMessage());
      }
      System.out.println(other.api().list(SandboxQuery.all()).items().size() + " on the other");
    }
    // @end
  }

  static void snapshotPages(E2BApi e2b) {
    // @start region="snapshot-pages" :
    SnapshotPage page = e2b.listSnapshots(SnapshotQuery.all().withLimit(10));
    while (page.hasNext()) {
      page = e2b.listSnapshots(SnapshotQuery.all().withLimit(10).withNextToken(page.nextTokenValue()));
    }
    // @end
  }

  static void callOptions(E2BSandboxProvider e2b, String otherKey) {
    // @start region="call-options" :
    E2BApi other = e2b.api().with(CallOptions.defaults().withApiKey(otherKey).withHeader("X-Request-Id", "run-42"));
    SandboxPage page = other.list(SandboxQuery.all());
    // @end
  }

  static void waitForBuild(E2BTemplates templates) {
    // @start region="wait-for-build" :
    BuildInfo started = templates.buildInBackground(Template.fromTemplate("base").aptInstall("git"), "with-git");
    BuildStatus done = templates.waitForBuild(started, Duration.ofMinutes(10), entry -> System.out.println(entry.message()));
    // @end
  }
}
