package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.CodeContext;
import io.sandboxes.CodeExecution;
import io.sandboxes.CodeResult;
import io.sandboxes.CodeTimeoutException;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.CodeInterpreterImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The code interpreter's bash, JavaScript, TypeScript, R and Java contexts, IPython's text of results, and how fast a
 * timed-out run gives its context back, through the Java SDK against the real template in a real
 * sandbox, reached through the server's port routing.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
// one test at a time: the timeout bound measures one run's way back, not runs racing in one sandbox
@Execution(ExecutionMode.SAME_THREAD)
class CodeInterpreterLanguagesTest {
  private LiveSandbox sandbox;

  @BeforeAll
  void start(E2BApi e2b) {
    try (DockerRuntime docker = DockerRuntime.connect()) {
      CodeInterpreterImage.ensure(docker, BaseImage.ensure(docker, System.err::println), System.err::println);
    }
    sandbox = e2b.create(SandboxSpec.of(SandboxSpec.CODE_INTERPRETER_TEMPLATE).withEnv(Map.of("FROM_SANDBOX", "sandbox-wide")));
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private CodeExecution run(String language, String code) {
    return sandbox.runCode(code, RunCodeOptions.defaults().withLanguage(language));
  }

  @Test
  @DisplayName("bash: variables, functions and cwd last across runs; stdout and stderr stream apart; a failing status is bash_kernel's error")
  void bash() {
    CodeContext ctx = sandbox.createCodeContext("bash", "/tmp");
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      assertThat(ctx.language()).isEqualTo("bash");
      assertThat(sandbox.runCode("pwd", in).stdoutText()).isEqualTo("/tmp\n");
      // job control, as in E2B's bash_kernel (an interactive bash on a terminal): jobs of their own process groups
      assertThat(sandbox.runCode("case $- in *m*) echo job control;; esac", in).stdoutText()).isEqualTo("job control\n");
      sandbox.runCode("N=41; greet() { echo \"hi $1\"; }; mkdir -p /tmp/langs && cd /tmp/langs", in).orThrow();
      List<String> out = new CopyOnWriteArrayList<>();
      CodeExecution e = sandbox.runCode("echo $((N + 1)); greet there; pwd; echo oops >&2", in.onStdout(out::add));
      assertThat(e.stdoutText()).isEqualTo("42\nhi there\n/tmp/langs\n");
      assertThat(String.join("", out)).isEqualTo(e.stdoutText());
      assertThat(e.stderrText()).isEqualTo("oops\n");
      assertThat(e.error()).isNull();
      assertThat(e.results()).isEmpty();

      CodeExecution failed = sandbox.runCode("echo before; (exit 3)", in);
      assertThat(failed.stdoutText()).isEqualTo("before\n");
      assertThat(failed.error()).isNotNull();
      assertThat(failed.error().name()).isEmpty();
      assertThat(failed.error().value()).isEqualTo("3");
      // code reading stdin reads nothing, and the shell goes on
      assertThat(sandbox.runCode("cat; echo after", in).stdoutText()).isEqualTo("after\n");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
  }

  @Test
  @DisplayName("bash's default context: made on first use, kept, with the sandbox's env and env for one run only")
  void bashDefaultAndEnv() {
    run("bash", "DEFAULT_KEPT=yes").orThrow();
    assertThat(run("bash", "echo $DEFAULT_KEPT $FROM_SANDBOX").stdoutText()).isEqualTo("yes sandbox-wide\n");
    assertThat(sandbox.runCode("echo $FOO", RunCodeOptions.defaults().withLanguage("bash").withEnv(Map.of("FOO", "bar b'q")))
        .stdoutText()).isEqualTo("bar b'q\n");
    assertThat(run("bash", "echo ${FOO:-default}").stdoutText()).isEqualTo("default\n");
    assertThat(sandbox.listCodeContexts()).extracting(CodeContext::language).contains("python", "bash");
  }

  @Test
  @DisplayName("JavaScript: declarations last across runs, top-level await, import, results as ijavascript's text, errors with name, message and stack")
  void javascript() {
    CodeContext ctx = sandbox.createCodeContext("js", null);
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      assertThat(ctx.language()).isEqualTo("javascript");
      assertThat(ctx.cwd()).isEqualTo("/home/user");
      assertThat(sandbox.runCode("let n = 41; function twice(x) { return 2 * x }; n + 1", in).text()).isEqualTo("42");
      assertThat(sandbox.runCode("twice(n)", in).text()).isEqualTo("82");
      CodeExecution logged = sandbox.runCode("console.log('Hello World!'); console.error('to stderr')", in);
      assertThat(logged.stdoutText()).isEqualTo("Hello World!\n");
      assertThat(logged.stderrText()).isEqualTo("to stderr\n");
      assertThat(logged.text()).isEqualTo("undefined"); // ijavascript shows undefined, as E2B's kernel does
      assertThat(sandbox.runCode("await Promise.resolve('Hello World!')", in).text()).isEqualTo("Hello World!");
      assertThat(sandbox.runCode("const later = await Promise.resolve(5)", in).error()).isNull();
      assertThat(sandbox.runCode("later * 2", in).text()).isEqualTo("10");
      assertThat(sandbox.runCode("import { readFileSync } from 'fs'\nimport path from 'path'\ntypeof readFileSync + ' ' + path.basename('/a/b.txt')", in)
          .text()).isEqualTo("function b.txt");
      assertThat(sandbox.runCode("({ a: [1, 'x'], b: null })", in).text()).isEqualTo("{ a: [ 1, 'x' ], b: null }");
      assertThat(sandbox.runCode("process.cwd()", in).text()).isEqualTo("/home/user");

      CodeExecution failed = sandbox.runCode("function boom() { return null.x }\nboom()", in);
      assertThat(failed.error()).isNotNull();
      assertThat(failed.error().name()).isEqualTo("TypeError");
      assertThat(failed.error().value()).isEqualTo("Cannot read properties of null (reading 'x')");
      assertThat(failed.error().traceback()).contains("TypeError: Cannot read properties of null").contains("at boom")
          .doesNotContain("jskernel");
      CodeExecution thrown = sandbox.runCode("throw 5", in);
      assertThat(thrown.error().name()).isEqualTo("number");
      assertThat(thrown.error().value()).isEqualTo("5");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
  }

  @Test
  @DisplayName("JavaScript's default context: env for one run only, restored after")
  void javascriptEnv() {
    assertThat(sandbox.runCode("process.env.FOO", RunCodeOptions.defaults().withLanguage("javascript").withEnv(Map.of("FOO", "bar")))
        .text()).isEqualTo("bar");
    assertThat(run("js", "process.env.FOO || 'default'").text()).isEqualTo("default");
    assertThat(run("JavaScript", "process.env.FROM_SANDBOX").text()).isEqualTo("sandbox-wide");
  }

  @Test
  @DisplayName("a result's text is the kernel's text/plain, less the quotes around a string as E2B's server strips them; None gives none")
  void resultText() {
    assertThat(run("python", "'a'").text()).isEqualTo("a");
    assertThat(run("python", "\"it's\"").text()).isEqualTo("it's");
    assertThat(run("python", "1.0").text()).isEqualTo("1.0");
    assertThat(run("python", "['a', 1]").text()).isEqualTo("['a', 1]");
    assertThat(run("python", "{'k': 'v'}").text()).isEqualTo("{'k': 'v'}");
    assertThat(run("python", "None").results()).isEmpty();
    assertThat(run("python", "print('x')").results()).isEmpty();
    assertThat(run("python", "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})").text())
        .isEqualTo("   a  b\n0  1  x\n1  2  y");
  }

  @Test
  @DisplayName("an unknown language is refused, naming it and what is served")
  void unknownLanguage() {
    assertThatThrownBy(() -> run("cobol", "1"))
        .isInstanceOfSatisfying(SandboxRpcException.class, x -> {
          assertThat(x.code()).isEqualTo("invalid_argument");
          assertThat(x.getMessage()).contains("'cobol' is not supported").contains("supported: python, javascript, typescript, bash, r, java");
        });
    assertThatThrownBy(() -> sandbox.createCodeContext("julia", null))
        .hasMessageContaining("'julia' is not supported").hasMessageContaining("python, javascript, typescript, bash, r, java");
  }

  @Test
  @DisplayName("R: state lasts across runs; each visible value is a display of its printed form (IRkernel's, none main); cat is stdout, warnings and messages stderr; an error is IRkernel's ERROR and ends the run")
  void r() {
    CodeContext ctx = sandbox.createCodeContext("r", "/tmp");
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      assertThat(ctx.language()).isEqualTo("r");
      CodeExecution first = sandbox.runCode("x <- 5\nx * 2\ncat('hi\\n')\ninvisible(7)\nc(a = 1, b = 2)", in);
      assertThat(first.results()).extracting(CodeResult::text).containsExactly("[1] 10", "a b \n1 2 ");
      assertThat(first.results()).noneMatch(CodeResult::mainResult);
      assertThat(first.text()).isNull();
      assertThat(first.stdoutText()).isEqualTo("hi\n");
      assertThat(sandbox.runCode("x + 1", in).results()).extracting(CodeResult::text).containsExactly("[1] 6");
      assertThat(sandbox.runCode("getwd()", in).results()).extracting(CodeResult::text).containsExactly("[1] \"/tmp\"");
      assertThat(sandbox.runCode("data.frame(n = 1:2, s = c('u', 'v'))", in).results()).extracting(CodeResult::text)
          .containsExactly("  n s\n1 1 u\n2 2 v");
      CodeExecution noisy = sandbox.runCode("f <- function() { warning('careful'); 3 }\nf()\nmessage('note')", in);
      assertThat(noisy.stderrText()).isEqualTo("Warning message:\nIn f(): careful\nnote\n");
      assertThat(noisy.results()).extracting(CodeResult::text).containsExactly("[1] 3");

      CodeExecution failed = sandbox.runCode("1\nstop('boom')\ncat('never')", in);
      assertThat(failed.results()).extracting(CodeResult::text).containsExactly("[1] 1");
      assertThat(failed.stdoutText()).isEmpty();
      assertThat(failed.error()).isNotNull();
      assertThat(failed.error().name()).isEqualTo("ERROR");
      assertThat(failed.error().value()).isEqualTo("Error: boom\n");
      assertThat(sandbox.runCode("g <- function(v) sqrt(v) + undefined_thing; g(4)", in).error().value())
          .isEqualTo("Error in g(4): object 'undefined_thing' not found\n");
      assertThat(sandbox.runCode("1 +", in).error().value()).startsWith("Error: <text>:2:0: unexpected end of input");
      assertThat(sandbox.runCode("x", in).results()).extracting(CodeResult::text).containsExactly("[1] 5");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
    assertThat(run("r", "Sys.getenv('FROM_SANDBOX')").results()).extracting(CodeResult::text).containsExactly("[1] \"sandbox-wide\"");
    assertThat(sandbox.runCode("Sys.getenv('FOO')", RunCodeOptions.defaults().withLanguage("r").withEnv(Map.of("FOO", "bar b'q\"")))
        .results()).extracting(CodeResult::text).containsExactly("[1] \"bar b'q\\\"\"");
    assertThat(run("r", "Sys.getenv('FOO', unset = 'default')").results()).extracting(CodeResult::text).containsExactly("[1] \"default\"");
  }

  @Test
  @DisplayName("Java: JShell's state lasts across runs; the last expression's value is the main result; System.out is stdout; env vars are system properties for one run; errors name the exception or the compilation")
  void java() {
    CodeContext ctx = sandbox.createCodeContext("java", "/tmp");
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      assertThat(ctx.language()).isEqualTo("java");
      assertThat(sandbox.runCode("System.getProperty(\"user.dir\")", in).text()).isEqualTo("/tmp");
      CodeExecution first = sandbox.runCode("import java.util.*;\nint base = 40;\nint twice(int n) { return 2 * n; }\n"
          + "System.out.println(\"hi\"); System.err.println(\"oops\");\nList.of(base, twice(1))", in);
      assertThat(first.stdoutText()).isEqualTo("hi\n");
      assertThat(first.stderrText()).isEqualTo("oops\n");
      assertThat(first.text()).isEqualTo("[40, 2]");
      assertThat(first.results()).singleElement().satisfies(r -> assertThat(r.mainResult()).isTrue());
      assertThat(sandbox.runCode("base + twice(1)", in).text()).isEqualTo("42");
      assertThat(sandbox.runCode("\"tab\\there\"", in).text()).isEqualTo("tab\there");
      assertThat(sandbox.runCode("base = 1;", in).text()).isEqualTo("1"); // an assignment is an expression
      assertThat(sandbox.runCode("int unshown = 3;", in).text()).isNull();

      CodeExecution thrown = sandbox.runCode("System.out.println(\"before\");\nint q = 1 / 0;\nSystem.out.println(\"never\");", in);
      assertThat(thrown.stdoutText()).isEqualTo("before\n");
      assertThat(thrown.error()).isNotNull();
      assertThat(thrown.error().name()).isEqualTo("java.lang.ArithmeticException");
      assertThat(thrown.error().value()).isEqualTo("/ by zero");
      CodeExecution rejected = sandbox.runCode("undefinedThing + 1", in);
      assertThat(rejected.error().name()).isEqualTo("CompilationException");
      assertThat(rejected.error().value()).contains("cannot find symbol");
      assertThat(sandbox.runCode("int y = 3 +", in).error().name()).isEqualTo("CompilationException");
      assertThat(sandbox.runCode("base", in).text()).isEqualTo("1");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
    assertThat(run("java", "System.getProperty(\"FROM_SANDBOX\")").text()).isEqualTo("sandbox-wide");
    assertThat(sandbox.runCode("System.getProperty(\"FOO\")", RunCodeOptions.defaults().withLanguage("java")
        .withEnv(Map.of("FOO", "bar b'q\" \u00fc"))).text()).isEqualTo("bar b'q\" \u00fc");
    assertThat(run("java", "System.getProperty(\"FOO\", \"default\")").text()).isEqualTo("default");
  }

  @Test
  @DisplayName("TypeScript (also ts): types dropped, declarations kept across runs, top-level await, a syntax error as SyntaxError")
  void typescript() {
    CodeContext ctx = sandbox.createCodeContext("ts", null);
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      assertThat(ctx.language()).isEqualTo("typescript");
      CodeExecution logged = sandbox.runCode("const message: string = 'Hello World!'; console.log(message)", in);
      assertThat(logged.stdoutText()).isEqualTo("Hello World!\n");
      assertThat(sandbox.runCode("interface P { x: number }\nconst p: P = { x: 20 };\nfunction twice(n: number): number { return 2 * n }\ntwice(p.x) + 2", in)
          .text()).isEqualTo("42");
      assertThat(sandbox.runCode("message.length + p.x", in).text()).isEqualTo("32");
      assertThat(sandbox.runCode("await Promise.resolve<number>(7)", in).text()).isEqualTo("7");
      assertThat(sandbox.runCode("process.cwd()", in).text()).isEqualTo("/home/user");
      CodeExecution bad = sandbox.runCode("const x: = 1", in);
      assertThat(bad.error()).isNotNull();
      assertThat(bad.error().name()).isEqualTo("SyntaxError");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
    assertThat(run("typescript", "const n: number = 5; n * 2").text()).isEqualTo("10");
  }

  @Test
  @DisplayName("the default contexts listed from the start are Python's and JavaScript's, as E2B's; JavaScript's starts on its first use, under that id")
  void defaultContextsListed(E2BApi e2b) {
    try (LiveSandbox fresh = e2b.create(SandboxSpec.of(SandboxSpec.CODE_INTERPRETER_TEMPLATE))) {
      List<CodeContext> listed = fresh.listCodeContexts();
      assertThat(listed).extracting(CodeContext::language).containsExactly("python", "javascript");
      assertThat(listed).extracting(CodeContext::cwd).containsOnly("/home/user");
      String js = listed.get(1).id();
      assertThat(fresh.runCode("var seen = 41; seen + 1", RunCodeOptions.defaults().withLanguage("javascript")).text()).isEqualTo("42");
      CodeContext byId = new CodeContext(js, "javascript", "/home/user");
      assertThat(fresh.runCode("seen", RunCodeOptions.defaults().inContext(byId)).text()).isEqualTo("41");
      assertThat(fresh.listCodeContexts()).extracting(CodeContext::id).containsExactly(listed.get(0).id(), js);
    }
  }

  @Test
  @DisplayName("a Java run interrupted while JShell still compiles it is stopped as it would start: the context keeps its state")
  void javaInterruptedWhileCompiling() {
    CodeContext ctx = sandbox.createCodeContext("java", null);
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      sandbox.runCode("String kept = \"yes\";", in).orThrow();
      // one statement (one snippet) of 2000 lines: about 2 s to compile on a quiet machine, so the
      // 300 ms timeout's interrupt lands in the compiler; its sleep must never start
      StringBuilder block = new StringBuilder("{ long x = 0;\n");
      for (int i = 0; i < 2000; i++) {
        block.append("x += Math.abs(").append(i).append(" * x + ").append(i).append(");\n");
      }
      block.append("Thread.sleep(600000); }");
      assertThatThrownBy(() -> sandbox.runCode(block.toString(), in.withTimeout(Duration.ofMillis(300))))
          .isInstanceOf(CodeTimeoutException.class);
      // a kernel that missed the interrupt sleeps on, and the bridge, after its grace, starts it again:
      // then kept is gone ("cannot find symbol")
      CodeExecution next = sandbox.runCode("kept", in.withTimeout(Duration.ofSeconds(60)));
      assertThat(next.text()).as("%s", next).isEqualTo("yes");
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
  }

  @ParameterizedTest(name = "{0}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      python     | kept = 'yes'     | import time\\nwhile True: time.sleep(0.1) | kept
      python     | kept = 'yes'     | while True: pass                          | kept
      bash       | KEPT=yes         | while true; do sleep 0.1; done            | echo $KEPT
      bash       | KEPT=yes         | sleep 600                                 | echo $KEPT
      javascript | var kept = 'yes' | while (true) {}                           | kept
      javascript | var kept = 'yes' | await new Promise((r) => setTimeout(r, 600000)) | kept
      r          | kept <- 'yes'    | repeat Sys.sleep(0.1)                     | cat(kept)
      java       | String kept = "yes"; | Thread.sleep(600000);                 | kept
      """)
  @DisplayName("a run that times out gives its context back, state and all, promptly")
  void timeoutGivesTheContextBack(String language, String setup, String blocking, String check) {
    CodeContext ctx = sandbox.createCodeContext(language, null);
    try {
      RunCodeOptions in = RunCodeOptions.defaults().inContext(ctx);
      sandbox.runCode(setup, in).orThrow();
      // a loaded CI machine took seconds to compile a Java snippet: a Java run is given 3 s, so that the
      // bound on the next run below measures the way back from an interrupt, not the compiler
      Duration timeout = Duration.ofSeconds(language.equals("java") ? 3 : 1);
      assertThatThrownBy(() -> sandbox.runCode(blocking.replace("\\n", "\n"), in.withTimeout(timeout)))
          .isInstanceOf(CodeTimeoutException.class);
      long timedOut = System.nanoTime();
      CodeExecution next = sandbox.runCode(check, in.withTimeout(Duration.ofSeconds(30)));
      Duration took = Duration.ofNanos(System.nanoTime() - timedOut);
      assertThat(next.text() != null ? next.text() : next.stdoutText().strip()).as("%s", next).isEqualTo("yes");
      // 0.17 to 0.36 s for every row here, with four busy loops on the two cores beside it; a loaded CI
      // machine once took 4.6 s. The slow paths this guards against all take 10 s or more: a relay that
      // learns of the gone client only from 10 s keepalives (about 20 s), the bridge's 10 s interrupt
      // grace, the Java kernel's 30 s compile grace. So the bound sits below them, not at the quiet figure.
      assertThat(took).as("the next run's whole round trip after the timeout").isLessThan(Duration.ofSeconds(8));
    } finally {
      sandbox.removeCodeContext(ctx.id());
    }
  }
}
