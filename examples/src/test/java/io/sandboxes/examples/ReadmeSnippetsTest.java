package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.CodeExecution;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxAuthenticationException;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxProvider;
import io.sandboxes.VolumeManagement;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.Commands;
import io.sandboxes.e2b.E2BTemplates;
import io.sandboxes.e2b.EntryInfo;
import io.sandboxes.e2b.Filesystem;
import io.sandboxes.e2b.Git;
import io.sandboxes.e2b.GitInitOptions;
import io.sandboxes.e2b.GitPushOptions;
import io.sandboxes.e2b.WriteEntry;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.Pty;
import io.sandboxes.e2b.PtyOptions;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.langchain4j.SandboxCodeExecutionEngine;
import io.sandboxes.langchain4j.SandboxTools;
import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.springai.SandboxSpringTools;
import io.sandboxes.template.BuildInfo;
import io.sandboxes.template.BuildStatus;
import io.sandboxes.template.CopyOptions;
import io.sandboxes.template.Template;
import io.sandboxes.mcp.SandboxMcpServer;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The README's Java snippets live here, between {@code // snippet:NAME} and {@code // end}, and
 * run as tests; {@link #readmeMatchesSources()} checks the README shows exactly this code (the
 * JUnit snippet lives in the junit-extension module's tests).
 */
class ReadmeSnippetsTest {
  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);

  @Test
  @DisplayName("README: the one-shot quick start prints 42")
  void oneShot() {
    // snippet:quickstart
    try (SandboxClient sandboxes = Sandboxes.local()) {
      ExecResult result = sandboxes.sandbox().exec("python3 -c 'print(6 * 7)'");
      out.println(result.stdout().strip() + " (exit " + result.exitCode() + ")");
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("42 (exit 0)\n");
  }

  @Test
  @DisplayName("README: a live sandbox with a timeout, env, files and an allow-list")
  void live() {
    // snippet:live
    try (SandboxClient sandboxes = Sandboxes.local();
         LiveSandbox sandbox = sandboxes.sandbox()
             .timeout(Duration.ofMinutes(10))
             .env("MODE", "demo")
             .allowOut("pypi.org", "*.pythonhosted.org")
             .create()) {
      sandbox.writeFile("/home/user/hello.py", "import os; print('hello from', os.environ['MODE'])");
      out.println(sandbox.exec("python3 /home/user/hello.py").stdout().strip());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("hello from demo\n");
  }

  @Test
  @DisplayName("README: the code interpreter keeps state, streams output, returns errors and charts as data")
  void codeInterpreter() {
    // snippet:code-interpreter
    try (SandboxClient sandboxes = Sandboxes.local();
         LiveSandbox sandbox = sandboxes.sandbox().codeInterpreter().create()) {
      sandbox.runCode("import math\nr = 2");                   // state carries to the next run
      CodeExecution run = sandbox.runCode("print('area:'); round(math.pi * r ** 2, 3)",
          RunCodeOptions.defaults().onStdout(out::print));      // streamed as it is printed
      out.println(run.text());                                  // the last expression's value
      out.println(sandbox.runCode("1 / 0").error().name());     // an exception is data
      CodeExecution chart = sandbox.runCode("import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.show()");
      byte[] png = chart.results().get(0).png();                // the chart, as PNG bytes
      out.println(png.length > 1000 ? "chart: png" : "no chart");
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("area:\n12.566\nZeroDivisionError\nchart: png\n");
  }

  @Test
  @DisplayName("README: a template built from base with a copied script and a RUN, and a sandbox booted from it by name")
  void template() throws Exception {
    // snippet:template
    try (SandboxClient sandboxes = Sandboxes.local()) {
      Path project = Files.createTempDirectory("readme-tools");
      Files.writeString(project.resolve("hello.sh"), "echo \"hello from $(cat /etc/motto)\"\n");
      Template tools = Template.fromTemplate("base")
          .withContextDir(project)                                  // copy() reads from here
          .copy("hello.sh", "/home/user/hello.sh", CopyOptions.defaults().withMode(0755))
          .runCmd("echo 'a template of my own' > /etc/motto", "root")
          .setEnv("MODE", "demo");
      String name = "readme-tools-" + UUID.randomUUID().toString().substring(0, 8);
      BuildInfo built = sandboxes.buildTemplate(tools, name, line -> {});  // line: each build log line
      try (LiveSandbox sandbox = sandboxes.sandbox().template(built).create()) {
        out.print(sandbox.exec("./hello.sh; echo $MODE").stdout());
      }
      sandboxes.deleteTemplate(name);
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("hello from a template of my own\ndemo\n");
  }

  @Test
  @DisplayName("README: the provider-neutral API, with a capability tested for")
  void providerNeutral() {
    // snippet:provider
    try (SandboxClient sandboxes = Sandboxes.local()) {
      SandboxProvider provider = sandboxes.provider();
      provider.capability(VolumeManagement.class).ifPresent(v -> v.createVolume("readme-data"));
      try (Sandbox sandbox = provider.create(SandboxConfig.forProject("readme")
          .withVolume("readme-data", "/data")
          .withEnv(Map.of("A", "1")))) {
        out.println(sandbox.exec("echo $A > /data/a.txt && cat /data/a.txt").stdout().strip());
      }
      provider.capability(VolumeManagement.class).ifPresent(v -> v.removeVolume("readme-data"));
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("1\n");
  }

  @Test
  @DisplayName("README: LangChain4j's code execution engine and the tools a model calls, per conversation")
  void langchain4j() {
    // snippet:langchain4j
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxCodeExecutionEngine engine = new SandboxCodeExecutionEngine(sandboxes);
         SandboxTools tools = SandboxTools.builder(sandboxes).outputLimit(2_000).build()) {
      out.println(engine.execute("print(sum(range(101)))"));
      // what a model's tool call runs; AiServices.builder(...).toolProvider(tools) offers them to a model
      out.println(tools.runCommand("alice", "echo hi from alice"));
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("5050\nexit code: 0\nstdout:\nhi from alice\n\n");
  }

  @Test
  @DisplayName("README: the Spring AI tools, called with a conversation's tool context as a chat client calls them")
  void springAi() {
    // snippet:spring-ai
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).build()) {
      SandboxSpringTools tools = new SandboxSpringTools(toolkit); // ChatClient.builder(model).defaultToolCallbacks(tools.toolCallbacks())
      ToolContext alice = new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, "alice"));
      out.println(tools.runPython("print(2 ** 10)", alice));
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("exit code: 0\nstdout:\n1024\n\n");
  }

  @Test
  @DisplayName("README: the MCP server's tools, as a server on any transport serves them")
  void mcp() {
    // snippet:mcp
    try (SandboxClient sandboxes = Sandboxes.local();
         SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).build()) {
      // what SandboxMcpServer.serve(toolkit, transport, mapper) offers each session
      for (var tool : SandboxMcpServer.tools(toolkit)) {
        out.print(tool.tool().name() + " ");
      }
      out.println();
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("run_command run_python read_file write_file list_folder \n");
  }

  @Test
  @DisplayName("README: create, list by metadata, pause, connect (which resumes), kill")
  void lifecycle() {
    // snippet:lifecycle
    try (SandboxClient sandboxes = Sandboxes.local()) {
      LiveSandbox sandbox = sandboxes.sandbox().metadata("job", "readme-lifecycle").create();
      sandbox.writeFile("/home/user/state.txt", "kept");
      sandbox.pause();
      for (SandboxInfo info : sandboxes.list(SandboxQuery.byMetadata("job", "readme-lifecycle"))) {
        out.println(info.id().equals(sandbox.id()) + " " + info.state());
      }
      LiveSandbox again = sandboxes.connect(sandbox.id());
      out.println(again.readFile("/home/user/state.txt"));
      out.println(sandboxes.kill(again.id()));
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("true PAUSED\nkept\ntrue\n");
  }

  @Test
  @DisplayName("README: a command followed live, and a timeout that keeps the output written before it")
  void follow() {
    // snippet:follow
    try (SandboxClient sandboxes = Sandboxes.local(); LiveSandbox sandbox = sandboxes.create()) {
      sandbox.exec("for i in 1 2 3; do echo step $i; done", ExecOptions.defaults().onStdout(out::print));
      try {
        sandbox.exec("echo compiling; sleep 30", ExecOptions.defaults().withTimeout(Duration.ofSeconds(2)));
      } catch (CommandTimeoutException e) {
        out.println("timed out after: " + e.stdout().strip());
      }
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("step 1\nstep 2\nstep 3\ntimed out after: compiling\n");
  }

  @Test
  @DisplayName("README: Sandboxes.local(..) with the warm pool off starts each sandbox cold")
  void localOptions() {
    // snippet:local-options
    try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(0))) {   // no pre-started sandboxes
      out.println(sandboxes.sandbox().exec("echo started cold").stdout().strip());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("started cold\n");
  }

  @Test
  @DisplayName("README: a background command left running, found again by pid from another client, written to and waited for")
  void commandsByPid() {
    // snippet:commands
    try (SandboxClient sandboxes = Sandboxes.local(); LiveSandbox sandbox = sandboxes.create()) {
      CommandHandle job = sandbox.commands().start("while read line; do echo \"got $line\"; done",
          ExecOptions.defaults().withStdin(true).withTimeout(Duration.ZERO));
      int pid = job.pid();
      job.disconnect();                                        // it keeps running
      Commands commands = sandboxes.connect(sandbox.id()).commands(); // as another JVM would
      out.println(commands.list().stream().anyMatch(p -> p.pid() == pid));
      CommandHandle again = commands.connect(pid, out::print, null);
      commands.sendStdin(pid, "hello\n");
      commands.closeStdin(pid);
      out.println("exit " + again.waitFor().exitCode());
      out.println(commands.kill(pid));                         // false: it has ended
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("true\ngot hello\nexit 0\nfalse\n");
  }

  @Test
  @DisplayName("README: files through sandbox.files(): several in one call, a streamed write and read, a listing, exists and getInfo")
  void files() throws java.io.IOException {
    // snippet:files
    try (SandboxClient sandboxes = Sandboxes.local(); LiveSandbox sandbox = sandboxes.create()) {
      Filesystem files = sandbox.files();
      files.write(List.of(WriteEntry.of("data/a.csv", "x,y\n1,2\n"), WriteEntry.of("data/b.csv", "x,y\n3,4\n")));
      try (InputStream big = new ByteArrayInputStream(new byte[1 << 20])) {
        files.write("data/big.bin", big);                      // sent as it is read
      }
      files.list("data").stream().sorted(Comparator.comparing(EntryInfo::name))
          .forEach(e -> out.println(e.name() + " " + e.size() + " " + e.owner()));
      try (InputStream in = files.readStream("data/big.bin")) { // never the whole file in memory
        out.println(in.transferTo(OutputStream.nullOutputStream()) + " bytes read");
      }
      out.println(files.exists("data/c.csv") + " " + files.getInfo("data").type());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("a.csv 8 user\nb.csv 8 user\nbig.bin 1048576 user\n1048576 bytes read\nfalse DIR\n");
  }

  @Test
  @DisplayName("README: a terminal left running, found again by pid from another client, resized, typed into and waited for")
  void ptyByPid() {
    // snippet:pty
    try (SandboxClient sandboxes = Sandboxes.local(); LiveSandbox sandbox = sandboxes.create()) {
      CommandHandle shell = sandbox.pty().create(PtyOptions.of(80, 24));
      int pid = shell.pid();
      shell.disconnect();                                      // the shell keeps running
      Pty pty = sandboxes.connect(sandbox.id()).pty();         // as another JVM would
      CommandHandle again = pty.connect(pid);
      pty.resize(pid, 120, 40);
      pty.sendInput(pid, "stty size; exit\n");
      ExecResult done = again.waitFor();
      out.println(done.stdout().contains("40 120") + " exit " + done.exitCode());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("true exit 0\n");
  }

  @Test
  @DisplayName("README: a sandbox created with no egress at all, its network read back and replaced")
  void network() {
    // snippet:network
    try (SandboxClient sandboxes = Sandboxes.local();
         LiveSandbox sandbox = sandboxes.provider().api().create(SandboxSpec.defaults()
             .withNetwork(SandboxNetwork.denyAll()))) {           // sent in the create request
      out.println(sandbox.network().current().orElseThrow().denyOut());
      sandbox.network().update(SandboxNetwork.allowOnly("pypi.org", "*.pythonhosted.org"));
      out.println(sandbox.info().network().allowOut());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("[0.0.0.0/0]\n[pypi.org, *.pythonhosted.org]\n");
  }

  @Test
  @DisplayName("README: a repository made, committed to, branched and pushed to a remote through sandbox.git()")
  void git() {
    // snippet:git
    try (SandboxClient sandboxes = Sandboxes.local(); LiveSandbox sandbox = sandboxes.create()) {
      Git git = sandbox.git();
      String repo = "/home/user/app";
      git.init(repo, GitInitOptions.defaults().withInitialBranch("main"));
      git.configureUser("Agent", "agent@example.com");
      sandbox.files().write(repo + "/README.md", "# app\n");
      out.println(git.status(repo).untrackedCount() + " untracked");
      git.add(repo);
      git.commit(repo, "First commit");
      git.createBranch(repo, "feature");
      out.println(git.branches(repo).branches());
      git.init("/home/user/remote.git", GitInitOptions.defaults().withBare());
      git.remoteAdd(repo, "origin", "/home/user/remote.git");  // or https://…, pushed to with
      git.push(repo, GitPushOptions.defaults()                  // .withCredentials(user, token)
          .withRemote("origin").withBranch("feature"));
      out.println(git.status(repo).upstream());
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("1 untracked\n[feature, main]\norigin/feature\n");
  }

  @Test
  @DisplayName("README: a template built in the background, its status read, and a bounded wait for its end")
  void templatesInBackground() {
    // snippet:templates
    try (SandboxClient sandboxes = Sandboxes.local()) {
      E2BTemplates templates = sandboxes.provider().api().templates();
      String name = "readme-bg-" + UUID.randomUUID().toString().substring(0, 8);
      BuildInfo started = templates.buildInBackground(Template.fromTemplate("base").runCmd("echo built > /home/user/built"), name);
      BuildStatus now = templates.buildStatus(started, 0);        // WAITING, BUILDING, READY or ERROR, and a page of its log
      BuildStatus status = templates.waitForBuild(started, Duration.ofMinutes(5)); // READY, or TemplateBuildException
      out.println(status.state() + " " + templates.exists(name));
      sandboxes.deleteTemplate(name);
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("READY true\n");
  }

  @Test
  @DisplayName("README: a per-call request timeout, and a second account in the same JVM refused with a typed exception")
  void accounts() {
    // snippet:accounts
    try (SandboxClient mine = Sandboxes.local();
         SandboxClient other = Sandboxes.e2b(b -> b.environment(Map.of())   // nothing from E2B_* variables
             .apiUrl(mine.provider().apiUrl())
             .sandboxUrl(mine.provider().sandboxUrl().orElseThrow())
             .apiKey("e2b_" + "0".repeat(40))                                 // a key this server does not know
             .retries(5)                                                      // 429s waited out up to 5 times
             .requestTimeout(Duration.ofSeconds(20)))) {
      try (LiveSandbox sandbox = mine.create()) {
        out.println(mine.provider().api().withRequestTimeout(Duration.ofSeconds(5)).info(sandbox.id()).state());
      }
      try {
        other.list(SandboxQuery.all());
      } catch (SandboxAuthenticationException e) {
        out.println("refused: HTTP " + e.statusCode());
      }
    }
    // end
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("RUNNING\nrefused: HTTP 401\n");
  }

  private static final Pattern SOURCE_SNIPPET = Pattern.compile("// snippet:(\\S+)\\n(.*?)\\n\\s*// end", Pattern.DOTALL);
  private static final Pattern README_SNIPPET = Pattern.compile("<!-- snippet:(\\S+) -->\\n```java\\n(.*?)\\n```", Pattern.DOTALL);

  static Map<String, String> snippets(Pattern pattern, String text) {
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      out.put(m.group(1), dedent(m.group(2)));
    }
    return out;
  }

  static String dedent(String block) {
    List<String> lines = block.lines().toList();
    int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return String.join("\n", lines.stream().map(l -> l.length() >= indent ? l.substring(indent) : l.strip()).toList()).strip();
  }

  @Test
  @DisplayName("README shows exactly the snippets these tests compile and run")
  void readmeMatchesSources() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    Map<String, String> inReadme = snippets(README_SNIPPET, readme);
    Map<String, String> inSources = new LinkedHashMap<>(snippets(SOURCE_SNIPPET,
        Files.readString(Path.of("src/test/java/io/sandboxes/examples/ReadmeSnippetsTest.java"))));
    inSources.putAll(snippets(SOURCE_SNIPPET,
        Files.readString(Path.of("../junit-extension/src/test/java/io/sandboxes/junit/ReadmeJUnitSnippetTest.java"))));
    assertThat(inReadme.keySet()).containsExactlyInAnyOrderElementsOf(inSources.keySet());
    inReadme.forEach((name, code) -> assertThat(code).as("README snippet " + name).isEqualTo(inSources.get(name)));
  }
}
