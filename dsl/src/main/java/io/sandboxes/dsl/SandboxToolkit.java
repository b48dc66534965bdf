package io.sandboxes.dsl;

import io.sandboxes.DirEntry;
import io.sandboxes.ExecOptions;
import io.sandboxes.CodeExecution;
import io.sandboxes.ExecResult;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.e2b.LiveSandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Sandbox operations for agent frameworks, text in and text out, with a sandbox of its own per
 * conversation: run a shell command, run Python, read, write and list files. The framework
 * modules ({@code sandboxes-langchain4j}, {@code sandboxes-mcp}) expose these as their tools;
 * use it directly to wire sandboxes into any other.
 *
 * {@snippet :
 * try (SandboxClient sandboxes = Sandboxes.local();
 *      SandboxToolkit toolkit = SandboxToolkit.builder(sandboxes).outputLimit(2_000).build()) {
 *   String answer = toolkit.runCommand("alice", "python3 -c 'print(6 * 7)'"); // "exit code: 0\nstdout:\n42\n"
 * }
 * }
 *
 * <p>Each conversation (any key: a chat memory id, an MCP session id) gets its own sandbox on its
 * first call, so two conversations never see each other's files. A sandbox is killed on {@link
 * #release}, once its conversation has made no call for the sandbox timeout (each call made with
 * less than half of it left sets it anew), and for all of them at {@link #close}. A conversation
 * whose sandbox ended (its timeout passed, or something killed it) is told so once, in an {@code
 * error:} answer saying its files are gone; its next call starts a new, empty sandbox. A null
 * conversation is the {@code "default"} one.
 *
 * <p>Every operation answers text: a command's exit code and its output, each stream cut in the
 * middle to the output limit with a marker giving its full length; a failure (a file that is not
 * there, a command over its time, a sandbox that could not be made) as a line starting {@code
 * error:}, so a model can act on it and its conversation goes on; a command or program that ran
 * past its time answers what it printed before it was stopped. Outputs are plain text: terminal
 * colour codes are removed, and a code interpreter's traceback is cut to each frame's location and
 * line. Egress is whatever the client's sandboxes get: nothing at all on the local runtime unless
 * {@link Builder#allowOut} says otherwise; {@link #networkPolicy()} says which, for the tools'
 * descriptions.
 */
public final class SandboxToolkit implements AutoCloseable {
  /** The memory id of calls made without one. */
  public static final String DEFAULT_CONVERSATION = "default";

  private final SandboxClient client;
  private final @Nullable String template;
  private final Duration sandboxTimeout;
  private final Duration commandTimeout;
  private final int outputLimit;
  private final List<String> allowOut;
  private final Map<Object, LiveSandbox> sandboxes = new ConcurrentHashMap<>();
  /** Sandbox id to when (System.nanoTime) its timeout, as last set here, ends it. */
  private final Map<String, Long> endsAt = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  private SandboxToolkit(Builder b) {
    this.client = b.client;
    this.template = b.template;
    this.sandboxTimeout = b.sandboxTimeout;
    this.commandTimeout = b.commandTimeout;
    this.outputLimit = b.outputLimit;
    this.allowOut = List.copyOf(b.allowOut);
  }

  /**
   * Starts a toolkit whose sandboxes the given client makes; the client stays the caller's to close.
   *
   * @param client where the sandboxes run ({@code Sandboxes.local()}, {@code Sandboxes.e2b()}, ...)
   * @return a builder
   */
  public static Builder builder(SandboxClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /**
   * The sandboxes' network policy in a sentence for a model, as the tools' descriptions carry it:
   * which hosts they can reach, and that a denied one is a policy's answer (a refused connection,
   * or an HTTP 403 from the sandbox's egress gateway), not a flaky network to retry. With an
   * allow-list, only those destinations; without one, on a local runtime (a server on this
   * machine's loopback) nothing at all; elsewhere, the provider's default (E2B's is the open
   * internet).
   *
   * @return the sentence
   */
  public String networkPolicy() {
    if (!allowOut.isEmpty()) {
      return "Network: the sandbox can reach only " + String.join(", ", allowOut) + ". A connection to any other host is"
          + " refused by the sandbox's network policy (an HTTP 403 from its egress gateway, or a refused connection): that"
          + " is the policy, not a flaky network, so do not retry it.";
    }
    if (localRuntime()) {
      return "Network: the sandbox has no network access (closed by default): it can reach no host outside itself, so"
          + " downloads and package installs from the internet fail. A failed connection is the policy, not a flaky"
          + " network: do not retry it.";
    }
    return "Network: the sandbox reaches the internet as its provider allows by default.";
  }

  /** A server on this machine's loopback: the local runtime, whose sandboxes have no network unless allowed. */
  private boolean localRuntime() {
    String host = client.provider().apiUrl().getHost();
    if (host == null) {
      return false;
    }
    host = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    return host.equals("localhost") || host.startsWith("127.") || host.equals("::1") || host.equals("0:0:0:0:0:0:0:1");
  }

  /**
   * Runs a bash command line in the conversation's sandbox.
   *
   * @param conversation the conversation
   * @param command the command line
   * @return the exit code and the output, or an {@code error:} line
   */
  public String runCommand(@Nullable Object conversation, String command) {
    return guarded(conversation, () -> ToolText.result(sandbox(conversation).exec(command, options()), outputLimit));
  }

  /**
   * Runs a Python 3 program in the conversation's sandbox. With the code interpreter's template
   * ({@code code-interpreter-v1}) it runs in the conversation's kernel, so variables and imports
   * carry from one call to the next, and the answer has the last expression's value and any
   * exception with its traceback; otherwise each call is a fresh {@code python3} process.
   *
   * @param conversation the conversation
   * @param code the program's source
   * @return the exit code (or the result and exception) and the output, or an {@code error:} line
   */
  public String runPython(@Nullable Object conversation, String code) {
    if (codeInterpreter()) {
      return guarded(conversation, () -> ToolText.execution(sandbox(conversation).runCode(code, codeOptions()), outputLimit));
    }
    return guarded(conversation, () -> ToolText.result(python(conversation, code), outputLimit));
  }

  /** Whether sandboxes come from the code interpreter's template, whose kernel {@code runCode} reaches. */
  private boolean codeInterpreter() {
    return SandboxSpec.CODE_INTERPRETER_TEMPLATE.equals(template);
  }

  private RunCodeOptions codeOptions() {
    return RunCodeOptions.defaults().withTimeout(commandTimeout);
  }

  /**
   * Runs a Python 3 program and answers only what it printed when it succeeds, as a code
   * execution engine does.
   *
   * @param conversation the conversation
   * @param code the program's source
   * @return its stdout without a final newline, cut to the output limit, when it exits 0;
   *     otherwise its exit code and output, or an {@code error:} line
   */
  public String pythonOutput(@Nullable Object conversation, String code) {
    if (codeInterpreter()) {
      try {
        CodeExecution e = sandbox(conversation).runCode(code, codeOptions());
        if (e.error() != null) {
          return ToolText.execution(e, outputLimit);
        }
        return ToolText.bounded(withoutFinalNewline(e.stdoutText() + (e.text() == null ? "" : e.text())), outputLimit);
      } catch (RuntimeException e) {
        return failure(conversation, e);
      }
    }
    ExecResult r;
    try {
      r = python(conversation, code);
    } catch (RuntimeException e) {
      return failure(conversation, e);
    }
    if (r.exitCode() != 0) {
      return ToolText.result(r, outputLimit);
    }
    return ToolText.bounded(withoutFinalNewline(r.stdout()), outputLimit);
  }

  private static String withoutFinalNewline(String s) {
    return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
  }

  /** Runs a Python program from a file of its own, removed after; failures are exceptions. */
  private ExecResult python(@Nullable Object conversation, String code) {
    LiveSandbox s = sandbox(conversation);
    String path = "/tmp/tool-" + UUID.randomUUID() + ".py";
    s.writeBytes(path, code.getBytes(StandardCharsets.UTF_8));
    return s.exec("python3 " + path + "; status=$?; rm -f " + path + "; exit $status", options());
  }

  /**
   * Reads a text file from the conversation's sandbox.
   *
   * @param conversation the conversation
   * @param path the file's absolute path, or one relative to the user's home
   * @return the file's text, cut to the output limit, or an {@code error:} line
   */
  public String readFile(@Nullable Object conversation, String path) {
    return guarded(conversation, () -> ToolText.bounded(sandbox(conversation).readFile(path), outputLimit));
  }

  /**
   * Writes a text file in the conversation's sandbox, making its folders.
   *
   * @param conversation the conversation
   * @param path the file's path
   * @param content the whole text of the file
   * @return what was written, or an {@code error:} line
   */
  public String writeFile(@Nullable Object conversation, String path,
      String content) {
    return guarded(conversation, () -> {
      byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
      sandbox(conversation).writeBytes(path, bytes);
      return "wrote " + bytes.length + " bytes to " + path;
    });
  }

  /**
   * Lists a folder of the conversation's sandbox.
   *
   * @param conversation the conversation
   * @param path the folder's path
   * @return one line per entry (name, and a trailing slash for folders, or its size), or an
   *     {@code error:} line
   */
  public String listFolder(@Nullable Object conversation, String path) {
    return guarded(conversation, () -> {
      List<String> lines = new ArrayList<>();
      for (DirEntry e : sandbox(conversation).readDir(path)) {
        lines.add(e.type() == DirEntry.Type.DIRECTORY ? e.name() + "/" : e.size() == null ? e.name() : e.name() + " (" + e.size() + " bytes)");
      }
      return lines.isEmpty() ? "(empty)" : ToolText.bounded(String.join("\n", lines), outputLimit);
    });
  }

  /**
   * Kills the conversation's sandbox, if it has one; its next tool call makes a new one.
   *
   * @param conversation the conversation
   * @return whether it had one
   */
  public boolean release(@Nullable Object conversation) {
    LiveSandbox s = sandboxes.remove(key(conversation));
    if (s == null) {
      return false;
    }
    endsAt.remove(s.id());
    s.close();
    return true;
  }

  /**
   * The ids of the conversations that have a sandbox now.
   *
   * @return a snapshot of them
   */
  public List<Object> conversations() {
    return List.copyOf(sandboxes.keySet());
  }

  /**
   * The sandbox id of a conversation, if it has one: for a caller that wants to look inside.
   *
   * @param conversation the conversation
   * @return its sandbox's id, or null
   */
  public @Nullable String sandboxId(@Nullable Object conversation) {
    LiveSandbox s = sandboxes.get(key(conversation));
    return s == null ? null : s.id();
  }

  /** Kills every conversation's sandbox; calls after this answer an {@code error:} line. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      RuntimeException first = null;
      for (Object id : List.copyOf(sandboxes.keySet())) {
        try {
          release(id);
        } catch (RuntimeException e) {
          if (first == null) {
            first = e;
          }
        }
      }
      if (first != null) {
        throw first;
      }
    }
  }

  private ExecOptions options() {
    return ExecOptions.defaults().withTimeout(commandTimeout);
  }

  private static Object key(@Nullable Object conversation) {
    return conversation == null ? DEFAULT_CONVERSATION : conversation;
  }

  private LiveSandbox sandbox(@Nullable Object conversation) {
    if (closed.get()) {
      throw new SandboxException("this sandbox toolkit is closed");
    }
    LiveSandbox s = sandboxes.computeIfAbsent(key(conversation), k -> {
      SandboxRequest r = client.sandbox().timeout(sandboxTimeout).metadata("conversation", String.valueOf(k));
      if (template != null) {
        r = r.template(template);
      }
      if (!allowOut.isEmpty()) {
        r = r.allowOut(allowOut.toArray(String[]::new));
      }
      // counted from before the create: the server's deadline starts when the request reaches it,
      // so the estimate is never later than the server's (a slow create made it later, and a call
      // the timeout should have been set anew for left it alone)
      long asked = System.nanoTime();
      LiveSandbox made = r.create();
      endsAt.put(made.id(), asked + sandboxTimeout.toNanos());
      return made;
    });
    if (closed.get()) { // closed while this one was made: it must not outlive close()
      release(conversation);
      throw new SandboxException("this sandbox toolkit is closed");
    }
    Long end = endsAt.get(s.id());
    if (end == null || end - System.nanoTime() < sandboxTimeout.toNanos() / 2) {
      // the timeout counts from the conversation's last call, not from its first
      long asked = System.nanoTime();
      s.setTimeout(sandboxTimeout);
      endsAt.put(s.id(), asked + sandboxTimeout.toNanos());
    }
    return s;
  }

  private String guarded(@Nullable Object conversation, java.util.function.Supplier<String> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return failure(conversation, e);
    }
  }

  /**
   * A failure as text. When it says the conversation's sandbox is gone, the sandbox is forgotten
   * (its next call makes a new one) and the answer says the files went with it.
   */
  private String failure(@Nullable Object conversation, RuntimeException e) {
    LiveSandbox s = sandboxes.get(key(conversation));
    if (e instanceof SandboxNotFoundException gone && s != null && s.id().equals(gone.sandboxId())
        && sandboxes.remove(key(conversation), s)) {
      endsAt.remove(s.id());
      return ToolText.failure(new SandboxException("this conversation's sandbox " + s.id() + " has ended (its timeout passed, "
          + "or it was killed) and its files are gone; the next call starts a new, empty sandbox"), outputLimit);
    }
    return ToolText.failure(e, outputLimit);
  }

  /** Settings of {@link SandboxToolkit}. */
  public static final class Builder {
    private final SandboxClient client;
    private @Nullable String template;
    private Duration sandboxTimeout = Duration.ofMinutes(30);
    private Duration commandTimeout = Duration.ofSeconds(60);
    private int outputLimit = 4_000;
    private final List<String> allowOut = new ArrayList<>();

    private Builder(SandboxClient client) {
      this.client = client;
    }

    /**
     * The template each conversation's sandbox is made from; the provider's default by default.
     *
     * @param template a template name or id
     * @return this
     */
    public Builder template(String template) {
      this.template = Objects.requireNonNull(template, "template");
      return this;
    }

    /**
     * How long a conversation's sandbox lives after its last call, unless released first; 30
     * minutes by default.
     *
     * @param timeout positive
     * @return this
     */
    public Builder sandboxTimeout(Duration timeout) {
      this.sandboxTimeout = positive(timeout, "sandboxTimeout");
      return this;
    }

    /**
     * How long one command or program may run before it is stopped and reported as an error; 60
     * seconds by default.
     *
     * @param timeout positive
     * @return this
     */
    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = positive(timeout, "commandTimeout");
      return this;
    }

    /**
     * The most characters of each output stream or file a tool answers with; the rest is cut in
     * the middle, with a marker giving the full length. 4,000 by default.
     *
     * @param characters at least 100
     * @return this
     */
    public Builder outputLimit(int characters) {
      if (characters < 100) {
        throw new IllegalArgumentException("outputLimit must be at least 100 characters, got " + characters);
      }
      this.outputLimit = characters;
      return this;
    }

    /**
     * Destinations the sandboxes may reach (host names, addresses or CIDR ranges, as {@link
     * SandboxRequest#allowOut} takes them); none by default.
     *
     * @param destinations what to allow
     * @return this
     */
    public Builder allowOut(String... destinations) {
      allowOut.addAll(List.of(destinations));
      return this;
    }

    /**
     * The toolkit so configured.
     *
     * @return a new toolkit, with no sandbox made yet
     */
    public SandboxToolkit build() {
      return new SandboxToolkit(this);
    }

    private static Duration positive(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive, got " + d);
      }
      return d;
    }
  }
}
