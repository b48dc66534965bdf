import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jshell.EvalException;
import jdk.jshell.ExpressionSnippet;
import jdk.jshell.JShell;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.UnresolvedReferenceException;
import jdk.jshell.VarSnippet;
import jdk.jshell.execution.LocalExecutionControl;
import jdk.jshell.execution.LocalExecutionControlProvider;
import jdk.jshell.spi.ExecutionControl;
import jdk.jshell.spi.ExecutionEnv;

/**
 * The local code interpreter's Java contexts: one JVM per context running JShell, driven by
 * kernels.py. Part of the Sandboxes local runtime (the code-interpreter-v1 template), compiled when
 * the image is built, run with Debian's JDK.
 *
 * <p>Arguments: the descriptor requests arrive on, and the descriptor answers go to. A request is
 * one line: the run's token, then the code and each env var's name and value, every field
 * hex-encoded UTF-8 behind an 'x'. As in E2B's Java contexts, env vars are system properties: the
 * process's environment is copied into them at the start, and a run's own are set for that run and
 * then put back. The snippets run in this JVM (JShell's local engine), so what they print is this
 * process's output; the value of the last expression is the run's result.
 *
 * <p>SIGINT stops the snippet running. JShell's own stop() reaches only code already running, so
 * an interrupt that arrives while JShell still compiles the snippet is kept: the snippet is stopped
 * as it would start, and the kernel tells the bridge at once, on the answers' descriptor, with a
 * line of '~' and the run's token, that it heard the interrupt and is compiling (the bridge then
 * waits for the compiler instead of taking the context for stuck). The answer is the token and a
 * JSON object (a result, an error, or nothing); before it, the token between two 0x1e bytes goes
 * to stdout and to stderr.
 */
public final class JavaKernel {
  private static volatile boolean interrupted;
  /** Whether a snippet's code runs (not JShell compiling it). */
  private static volatile boolean running;
  /** The run's token, while one runs. */
  private static volatile String current;
  private static OutputStream answers;

  private JavaKernel() {}

  public static void main(String[] args) throws IOException {
    System.getenv().forEach((name, value) -> {
      if (System.getProperty(name) == null) {
        System.setProperty(name, value);
      }
    });
    JShell shell = JShell.builder().executionEngine(new StoppableProvider(), Map.of()).build();
    sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> {
      interrupted = true; // first: a snippet about to start sees it (StoppableProvider)
      String token = current;
      if (running) {
        shell.stop();
      } else if (token != null) {
        answer("~" + token);
      }
    });
    try (BufferedReader requests = new BufferedReader(new InputStreamReader(new FileInputStream("/proc/self/fd/" + args[0]),
        StandardCharsets.UTF_8)); OutputStream out = new FileOutputStream("/proc/self/fd/" + args[1])) {
      answers = out;
      String line;
      while ((line = requests.readLine()) != null) {
        String[] fields = line.split(" ", -1);
        String token = fields[0];
        String code = unhex(fields[1]);
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 2; i + 1 < fields.length; i += 2) {
          env.put(unhex(fields[i]), unhex(fields[i + 1]));
        }
        Map<String, String> before = new LinkedHashMap<>();
        env.forEach((name, value) -> before.put(name, System.setProperty(name, value)));
        interrupted = false;
        current = token;
        String reply;
        try {
          reply = run(shell, code);
        } catch (RuntimeException e) {
          reply = error(e.getClass().getName(), String.valueOf(e.getMessage()), "");
        }
        before.forEach((name, value) -> {
          if (value == null) {
            System.clearProperty(name);
          } else {
            System.setProperty(name, value);
          }
        });
        System.out.flush();
        System.err.flush();
        String mark = "\u001e" + token + "\u001e";
        System.out.print(mark);
        System.out.flush();
        System.err.print(mark);
        System.err.flush();
        current = null;
        answer(token + " " + reply);
      }
    }
    shell.close();
  }

  /** Writes one line to the bridge: from the main thread and from the signal's. */
  private static void answer(String line) {
    synchronized (JavaKernel.class) {
      try {
        answers.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        answers.flush();
      } catch (IOException e) {
        // the bridge is gone: the requests' end follows
      }
    }
  }

  /** JShell's local engine, which does not start a snippet when an interrupt came before it. */
  private static final class StoppableProvider extends LocalExecutionControlProvider {
    @Override
    public String name() {
      return "stoppable";
    }

    @Override
    public ExecutionControl generate(ExecutionEnv env, Map<String, String> parameters) {
      return new LocalExecutionControl() {
        @Override
        protected void clientCodeEnter() {
          super.clientCodeEnter();
          running = true;
        }

        @Override
        protected void clientCodeLeave() {
          running = false;
          super.clientCodeLeave();
        }

        @Override
        protected String invoke(Method doit) throws Exception {
          if (interrupted) {
            throw new ExecutionControl.StoppedException();
          }
          return super.invoke(doit);
        }
      };
    }
  }

  /** Runs the code snippet by snippet, stopping at the first that fails; the answer's JSON. */
  private static String run(JShell shell, String code) {
    SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
    String remaining = code;
    String value = null;
    while (!remaining.isBlank()) {
      SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(remaining);
      SourceCodeAnalysis.Completeness completeness = info.completeness();
      if (completeness == SourceCodeAnalysis.Completeness.EMPTY) {
        break;
      }
      if (completeness == SourceCodeAnalysis.Completeness.DEFINITELY_INCOMPLETE
          || completeness == SourceCodeAnalysis.Completeness.CONSIDERED_INCOMPLETE) {
        return error("CompilationException", "the code ends inside a statement: " + remaining.strip(), "");
      }
      remaining = info.remaining();
      value = null;
      for (SnippetEvent event : shell.eval(info.source())) {
        if (event.causeSnippet() != null) {
          continue; // a snippet this one changed the state of
        }
        if (interrupted) {
          return error("InterruptedException", "the run was interrupted", "");
        }
        if (event.exception() instanceof EvalException e) {
          return error(e.getExceptionClassName(), String.valueOf(e.getMessage()), trace(e));
        }
        if (event.exception() instanceof UnresolvedReferenceException e) {
          return error("UnresolvedReferenceException", "it uses something not defined: "
              + shell.unresolvedDependencies((jdk.jshell.DeclarationSnippet) e.getSnippet()).collect(Collectors.joining(", ")), "");
        }
        if (event.exception() != null) {
          return error(event.exception().getClass().getName(), String.valueOf(event.exception().getMessage()), "");
        }
        Snippet snippet = event.snippet();
        if (event.status() == Snippet.Status.REJECTED) {
          String why = shell.diagnostics(snippet).filter(d -> d.isError()).map(d -> d.getMessage(Locale.ROOT))
              .collect(Collectors.joining("\n"));
          return error("CompilationException", why.isEmpty() ? "the snippet was rejected" : why, snippet.source());
        }
        if (event.value() != null && (snippet instanceof ExpressionSnippet
            || snippet.subKind() == Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND)) {
          String type = snippet instanceof ExpressionSnippet x ? x.typeName() : ((VarSnippet) snippet).typeName();
          value = type.equals("String") || type.equals("java.lang.String") ? unquote(event.value()) : event.value();
        }
      }
    }
    if (interrupted) {
      return error("InterruptedException", "the run was interrupted", "");
    }
    return value == null ? "{}" : "{\"result\":{\"text/plain\":" + json(value) + "}}";
  }

  private static String trace(EvalException e) {
    List<String> lines = new ArrayList<>();
    lines.add(e.getExceptionClassName() + (e.getMessage() == null ? "" : ": " + e.getMessage()));
    for (StackTraceElement frame : e.getStackTrace()) {
      lines.add("\tat " + frame);
    }
    return String.join("\n", lines);
  }

  private static String error(String name, String value, String traceback) {
    return "{\"error\":{\"name\":" + json(name) + ",\"value\":" + json(value) + ",\"traceback\":" + json(traceback) + "}}";
  }

  private static String unhex(String field) {
    return new String(HexFormat.of().parseHex(field.substring(1)), StandardCharsets.UTF_8);
  }

  /** A String's value as the string itself: JShell shows it quoted, with Java's escapes. */
  static String unquote(String shown) {
    if (shown.length() < 2 || shown.charAt(0) != '"' || shown.charAt(shown.length() - 1) != '"') {
      return shown; // null, or a form this does not know
    }
    StringBuilder out = new StringBuilder(shown.length());
    for (int i = 1; i < shown.length() - 1; i++) {
      char c = shown.charAt(i);
      if (c != '\\' || i + 1 >= shown.length() - 1) {
        out.append(c);
        continue;
      }
      char n = shown.charAt(++i);
      switch (n) {
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case '0' -> out.append('\0');
        case 's' -> out.append(' ');
        case 'u' -> {
          if (i + 4 <= shown.length() - 2) {
            out.append((char) Integer.parseInt(shown.substring(i + 1, i + 5), 16));
            i += 4;
          } else {
            out.append("\\u");
          }
        }
        default -> out.append(n);
      }
    }
    return out.toString();
  }

  private static String json(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
