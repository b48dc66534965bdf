package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.DirEntry;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.HibernationOutcome;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Utf8Accumulator;
import io.sandboxes.e2b.internal.Watchdog;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A live E2B sandbox. Commands and files go to the sandbox's daemon (envd); lifecycle calls go to
 * the control plane. {@link #close()} kills the sandbox.
 *
 * <p>Thread-safe: several commands may run at once on one handle.
 *
 * @since 0.1
 */
public final class LiveSandbox implements Sandbox {

  /** Extra time the client waits past a command's own deadline for the daemon to report it. */
  static final Duration DEADLINE_GRACE = Duration.ofSeconds(10);
  /** How long a command may run before the client checks whether its process still lives. */
  static final Duration SETTLE_PROBE = Duration.ofMillis(1_500);
  /** Once the process is seen gone, how long its exit report may take to arrive. */
  static final Duration EXIT_REPORT_GRACE = Duration.ofMillis(2_000);
  /** The exit code reported when a command's outcome cannot be observed: 128 + SIGKILL, never 0. */
  public static final int EXIT_CODE_UNKNOWN = 137;
  /** The liveness probe's own deadline. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

  private final E2BApi api;
  private final String id;
  private final @Nullable String templateId;
  private final @Nullable String envdVersion;
  private final String previewDomain;
  private volatile Envd envd;
  /** Set once this handle has killed its sandbox: a killed sandbox never comes back, so nothing need be asked. */
  private volatile boolean killed;
  private final AtomicBoolean closed = new AtomicBoolean();

  LiveSandbox(E2BApi api, String id, @Nullable String templateId, @Nullable String envdVersion, Envd envd, String previewDomain) {
    this.api = api;
    this.id = id;
    this.templateId = templateId;
    this.envdVersion = envdVersion;
    this.envd = envd;
    this.previewDomain = previewDomain;
  }

  @Override
  public String id() {
    return id;
  }

  /**
   * The sandbox's processes, as E2B's {@code sandbox.commands}: run a command in the foreground or
   * the background, list what runs, reattach to a process by pid (from this JVM or a later one),
   * write to it, close its input, kill it.
   *
   * @return the commands of this sandbox
   */
  public Commands commands() {
    return new Commands(this);
  }

  /**
   * The sandbox's terminals, as E2B's {@code sandbox.pty}: start a shell on a terminal, and type
   * into, resize, attach to or kill any terminal by its pid.
   *
   * @return the terminals of this sandbox
   */
  public Pty pty() {
    return new Pty(this);
  }

  /**
   * The sandbox's network, as E2B's {@code sandbox.updateNetwork} and {@code getInfo().network}:
   * replace the egress policy of the running sandbox, or read it.
   *
   * @return the network of this sandbox
   */
  public Network network() {
    return new Network(this);
  }

  /**
   * The sandbox's file system, as E2B's {@code sandbox.files}: read and write files whole or as
   * streams, several at once, list to a depth, make folders, rename, remove, ask what a path is,
   * watch a folder, each as any user of the sandbox.
   *
   * @return the file system of this sandbox
   */
  public Filesystem files() {
    return new Filesystem(this);
  }

  /**
   * Returns the template the sandbox was created from.
   *
   * @return the template's id, or {@code null} when the server did not say
   */
  public @Nullable String templateId() {
    return templateId;
  }

  /**
   * Returns the version of the sandbox's daemon (envd).
   *
   * @return the version, or {@code null} when the server did not say
   */
  public @Nullable String envdVersion() {
    return envdVersion;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The sandbox must come from a code-interpreter template ({@code code-interpreter-v1} on E2B
   * and on the local runtime). Output and results reach the listeners as each event arrives; a
   * timeout closes the stream, which makes the code interpreter interrupt the kernel.
   */
  @Override
  public io.sandboxes.CodeExecution runCode(String code, io.sandboxes.RunCodeOptions options) {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(options, "options");
    return envd.codeInterpreter().run(code, options);
  }

  @Override
  public io.sandboxes.CodeContext createCodeContext(String language, @Nullable String cwd) {
    return envd.codeInterpreter().create(Objects.requireNonNull(language, "language"), cwd);
  }

  @Override
  public List<io.sandboxes.CodeContext> listCodeContexts() {
    return envd.codeInterpreter().list();
  }

  @Override
  public void restartCodeContext(String contextId) {
    envd.codeInterpreter().restart(Objects.requireNonNull(contextId, "contextId"));
  }

  @Override
  public void removeCodeContext(String contextId) {
    envd.codeInterpreter().remove(Objects.requireNonNull(contextId, "contextId"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Asks the control plane ({@code GET /sandboxes/{id}}, which wakes nothing), so the answer is
   * the sandbox's state now, whoever paused, resumed or killed it: a sandbox the server no longer
   * has is {@link SandboxState#KILLED}. Once this handle has killed its sandbox it answers
   * {@code KILLED} without asking.
   *
   * @throws SandboxException when the control plane cannot be asked; never a guess
   */
  @Override
  public SandboxState status() {
    if (killed) {
      return SandboxState.KILLED;
    }
    try {
      return api.info(id).state();
    } catch (io.sandboxes.SandboxNotFoundException gone) {
      return SandboxState.KILLED;
    }
  }

  @Override
  public String previewUrl() {
    return previewUrl(api.provider().defaultPreviewPort());
  }

  @Override
  public String previewUrl(int port) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    java.util.function.BiFunction<String, Integer, String> resolver = api.provider().previewUrls();
    if (resolver != null) {
      return resolver.apply(id, port);
    }
    return "https://" + port + "-" + id + "." + previewDomain;
  }

  /** {@code /bin/bash -l -c <command>} with the given environment and working directory. */
  private static ObjectNode loginShell(String command, java.util.Map<String, String> env, @Nullable String cwd) {
    ObjectNode process = Json.object().put("cmd", "/bin/bash");
    process.putArray("args").add("-l").add("-c").add(command);
    if (!env.isEmpty()) {
      process.set("envs", Json.toObject(env));
    }
    if (cwd != null) {
      process.put("cwd", cwd);
    }
    return process;
  }

  /** E2B's {@code commands.run} request: the login shell, and stdin open only when asked for. */
  static ObjectNode startBody(String command, ExecOptions options) {
    ObjectNode body = Json.object();
    body.set("process", loginShell(command, options.env(), options.cwd()));
    body.put("stdin", options.stdin());
    return body;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The command runs as {@code /bin/bash -l -c <command>}, started in the background and
   * waited on. Its deadline is sent to the daemon, which kills it when it passes; that surfaces
   * as a {@link CommandTimeoutException} carrying the output written before the kill. Output
   * callbacks ({@link ExecOptions#onStdout(java.util.function.Consumer)}) see each piece as it
   * arrives; one that throws kills the command, and its exception is thrown from here.
   *
   * <p>A command that has not finished after 1.5 s is checked: while its process
   * lives, the wait goes on (bounded only by the command's own deadline). When the process is
   * gone and its stream then stays silent for 2 s without an exit report (a
   * detached child holds its output open), the result is exit code {@link #EXIT_CODE_UNKNOWN} with a line on stderr
   * saying why: an outcome that was not observed is never reported as success. An exit report
   * whose {@code exitCode} is not an int ({@code {}}, {@code "abc"}, {@code 4294967296}) is reported
   * the same way, never as 0. A failed check
   * counts as "still alive". Nothing (thread, timer, stream) outlives the call; an interrupt
   * cancels it.
   */
  @Override
  public ExecResult exec(String command, ExecOptions options) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    String context = "exec in sandbox " + id;
    Utf8Accumulator stdout = new Utf8Accumulator();
    Utf8Accumulator stderr = new Utf8Accumulator();
    CompletableFuture<JsonNode> end = new CompletableFuture<>();
    java.util.concurrent.atomic.AtomicLong lastEvent = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    java.util.concurrent.atomic.AtomicInteger pid = new java.util.concurrent.atomic.AtomicInteger(-1);
    ConnectStream stream = envd.stream("process.Process/Start", startBody(command, options), options.user(), options.timeout(),
        context, null);
    Thread reader = null;
    try (stream; Watchdog ignored = options.timeout().isZero() ? null
        : Watchdog.arm(id, options.timeout().plus(DEADLINE_GRACE), stream::close)) {
      JsonNode first = stream.next();
      if (first == null || !first.path("event").has("start")) {
        throw new SandboxException(context + ": the daemon did not report the process as started");
      }
      // a pid that is not a positive int is no process: never probed nor signalled
      pid.set(pidOf(first, -1));
      reader = io.sandboxes.e2b.internal.Tasks.start(id, "sandboxes-exec-" + id,
          () -> readEvents(stream, stdout, stderr, options, end, context, lastEvent));
      JsonNode report = await(end, SETTLE_PROBE);
      if (report == null) {
        if (processGone(pid.get(), options.user())) {
          // the grace window counts from the last thing the stream delivered: a stream still
          // draining output is not held, only one that has gone quiet is
          while ((report = await(end, EXIT_REPORT_GRACE)) == null) {
            if (System.nanoTime() - lastEvent.get() >= EXIT_REPORT_GRACE.toNanos()) {
              return unknownOutcome("the started process (pid " + pid.get() + ") is gone but its output stream is still held, "
                  + "so its real outcome cannot be observed", stdout, stderr, started);
            }
          }
        } else {
          report = await(end, null);
        }
      }
      return result(report, stdout, stderr, started);
    } catch (SandboxException e) {
      if (timedOut(e, options, started)) {
        synchronized (stdout) {
          stdout.finish();
          stderr.finish();
          throw new CommandTimeoutException(command, options.timeout(), stdout.text(), stderr.text(), e);
        }
      }
      if (e instanceof io.sandboxes.e2b.internal.StreamCutException cut && !Thread.currentThread().isInterrupted()) {
        throw explainCut(cut, "the command");
      }
      throw e;
    } catch (CallbackFailure e) {
      killQuietly(pid.get());
      throw e.getCause();
    } finally {
      if (reader != null) {
        reader.interrupt();
        joinQuietly(reader);
      }
    }
  }

  /**
   * What a stream that broke off means, asked of the control plane as E2B's SDKs do: a sandbox
   * that is gone is {@link io.sandboxes.SandboxNotFoundException}, one that was paused says so;
   * a sandbox still running, or an answer that could not be had, leaves the break as it was.
   */
  SandboxException explainCut(io.sandboxes.e2b.internal.StreamCutException cut, String what) {
    SandboxInfo now;
    try {
      now = api.info(id);
    } catch (io.sandboxes.SandboxNotFoundException gone) {
      io.sandboxes.SandboxNotFoundException e = new io.sandboxes.SandboxNotFoundException(id,
          "it was killed or reached its end of life while " + what + " was running (" + cut.getMessage()
              + "); the control plane says: " + gone.getMessage());
      e.initCause(cut);
      return e;
    } catch (RuntimeException couldNotLook) {
      cut.addSuppressed(couldNotLook);
      return cut;
    }
    if (now.state() == SandboxState.PAUSED) {
      return new io.sandboxes.SandboxPausedException(id, "sandbox " + id + " was paused while " + what + " was running ("
          + cut.getMessage() + ")", cut);
    }
    return cut;
  }

  /**
   * Whether a failure is the command's own deadline: the daemon says {@code deadline_exceeded},
   * or the stream broke off once the deadline (and the watchdog's grace) had passed.
   */
  private static boolean timedOut(SandboxException e, ExecOptions options, long started) {
    if (options.timeout().isZero()) {
      return false;
    }
    if (e instanceof io.sandboxes.SandboxRpcException rpc && "deadline_exceeded".equals(rpc.code())) {
      return true;
    }
    return !Thread.currentThread().isInterrupted() && System.nanoTime() - started >= options.timeout().toNanos();
  }

  /** Carries an exception an output callback threw out of the reader, to be rethrown as it was. */
  static final class CallbackFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CallbackFailure(RuntimeException cause) {
      super(cause);
    }

    @Override
    public synchronized RuntimeException getCause() {
      return (RuntimeException) super.getCause();
    }
  }

  /** Kills a command whose caller stopped listening; a failure to do so is added to nothing. */
  private void killQuietly(int pid) {
    if (pid <= 0) {
      return;
    }
    try {
      envd.unary("process.Process/SendSignal", Json.object().put("signal", "SIGNAL_SIGKILL")
          .set("process", Json.object().put("pid", pid)), null, "kill process " + pid);
    } catch (RuntimeException ignored) {
      // already gone, or the sandbox with it
    }
  }

  private static void readEvents(ConnectStream stream, Utf8Accumulator stdout, Utf8Accumulator stderr, ExecOptions options,
      CompletableFuture<JsonNode> end, String context, java.util.concurrent.atomic.AtomicLong lastEvent) {
    try {
      io.sandboxes.e2b.internal.ProcessMessage message;
      JsonNode report = null;
      boolean listenOut = options.onStdout() != null;
      boolean listenErr = options.onStderr() != null;
      while ((message = io.sandboxes.e2b.internal.ProcessMessage.next(stream)) != null) {
        JsonNode event = message.event();
        if (event == null || !event.has("keepalive")) {
          lastEvent.set(System.nanoTime());
        }
        if (message.isOutput()) {
          boolean toErr = message.channel() == io.sandboxes.e2b.internal.ProcessMessage.Channel.STDERR;
          String text = null;
          synchronized (stdout) {
            // without a listener the bytes are only kept, and decoded once at the end
            if (toErr) {
              text = add(stderr, message.output(), listenErr);
            } else {
              text = add(stdout, message.output(), listenOut);
            }
          }
          // outside the lock: a slow listener holds up only this reader
          deliver(toErr ? options.onStderr() : options.onStdout(), text);
        } else if (event.has("end")) {
          report = event.get("end");
        }
      }
      if (report == null) {
        end.completeExceptionally(new SandboxException(context + ": the process stream ended without an exit report"));
      } else {
        end.complete(report);
      }
    } catch (RuntimeException e) {
      end.completeExceptionally(e);
    }
  }

  private static @Nullable String add(Utf8Accumulator acc, byte[] chunk, boolean decode) {
    if (decode) {
      return acc.feed(chunk);
    }
    acc.add(chunk);
    return null;
  }

  private static void deliver(java.util.function.@Nullable Consumer<String> listener, @Nullable String text) {
    if (listener == null || text == null || text.isEmpty()) {
      return;
    }
    try {
      listener.accept(text);
    } catch (RuntimeException e) {
      throw new CallbackFailure(e);
    }
  }

  /** @return the report, or null when {@code window} passed first; a null window waits without limit */
  private static @Nullable JsonNode await(CompletableFuture<JsonNode> end, @Nullable Duration window) {
    try {
      return window == null ? end.get() : end.get(window.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while waiting for a command", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new SandboxException(e.getCause().getMessage(), e.getCause());
    }
  }

  private ExecResult result(JsonNode report, Utf8Accumulator stdout, Utf8Accumulator stderr, long started) {
    if (readExitCode(report) == null) {
      synchronized (stdout) {
        stdout.finish();
        stderr.finish();
      }
      return unknownOutcome("the daemon's exit report carries exitCode " + Json.abbreviate(report.get("exitCode"))
          + ", which is not an exit code", stdout, stderr, started);
    }
    synchronized (stdout) {
      stdout.finish();
      stderr.finish();
      return new ExecResult(exitCode(report), stdout.text(), stderr.text(), Duration.ofNanos(System.nanoTime() - started));
    }
  }

  private ExecResult unknownOutcome(String why, Utf8Accumulator stdout, Utf8Accumulator stderr, long started) {
    String note = "e2b: exit code unknown — " + why + "; reporting failure";
    synchronized (stdout) {
      String err = stderr.text();
      return new ExecResult(EXIT_CODE_UNKNOWN, stdout.text(), err.isEmpty() ? note : err + "\n" + note,
          Duration.ofNanos(System.nanoTime() - started));
    }
  }

  /**
   * Whether the process is positively gone: {@code kill -0} in the sandbox says so. Any failure
   * to look counts as alive, so the caller keeps waiting rather than inventing an outcome.
   */
  /**
   * Whether the process is gone, probed with {@code kill -0} as the user the process was started
   * as: another user's {@code kill -0} fails with "not permitted" for a live process (a command
   * run as root, probed as the default user, was taken for gone after 1.5 s).
   */
  boolean processGone(int pid, @Nullable String user) {
    if (pid <= 0) {
      return false;
    }
    String probe = "kill -0 " + pid + " 2>/dev/null && echo MOL_ALIVE || echo MOL_GONE";
    ExecOptions as = user == null ? ExecOptions.defaults() : ExecOptions.defaults().withUser(user);
    try (ConnectStream s = envd.stream("process.Process/Start", startBody(probe, as), user, PROBE_TIMEOUT,
        "liveness probe in sandbox " + id, null);
         Watchdog ignored = Watchdog.arm(id, PROBE_TIMEOUT.plus(DEADLINE_GRACE), s::close)) {
      Utf8Accumulator out = new Utf8Accumulator();
      io.sandboxes.e2b.internal.ProcessMessage message;
      while ((message = io.sandboxes.e2b.internal.ProcessMessage.next(s)) != null) {
        if (message.channel() == io.sandboxes.e2b.internal.ProcessMessage.Channel.STDOUT) {
          out.add(message.output());
        }
      }
      return out.text().contains("MOL_GONE");
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static void joinQuietly(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * envd omits {@code exitCode} when it is 0 (proto3 defaults are left out), so a missing code is
   * 0 only when the process is reported as having exited; a process ended by a signal reports -1.
   */
  static int exitCode(JsonNode end) {
    Integer code = readExitCode(end);
    return code == null ? EXIT_CODE_UNKNOWN : code;
  }

  /**
   * The exit code of an end event as {@link #exitCode} reads it, or null when the event carries an
   * {@code exitCode} that is not an int ({@code {}}, {@code "abc"}, {@code 4294967296}...): the
   * outcome is unknown then, and is never read as 0.
   */
  static @Nullable Integer readExitCode(JsonNode end) {
    JsonNode code = end.get("exitCode");
    if (code != null && !code.isNull()) {
      return Json.exactInt(code);
    }
    return end.path("exited").asBoolean(false) ? 0 : -1;
  }

  /** The pid of a start event when it is a positive int, else {@code otherwise}. */
  static int pidOf(JsonNode startMessage, int otherwise) {
    Integer pid = Json.exactInt(startMessage.path("event").path("start").get("pid"));
    return pid == null || pid <= 0 ? otherwise : pid;
  }

  /** The lifetime of a spawned process unless the options give one: one hour. */
  public static final Duration DEFAULT_SPAWN_TIMEOUT = Duration.ofHours(1);
  private static final java.util.Set<String> SHELLS = java.util.Set.of("bash", "/bin/bash", "sh", "/bin/sh", "");

  /**
   * {@inheritDoc}
   *
   * <p>Pipes run {@code /bin/bash -l -c <command>} with stdin open. A PTY runs the interactive
   * login shell ({@code /bin/bash -i -l}) with {@code TERM=xterm-256color} and a UTF-8 locale;
   * a command other than a shell name runs inside it ({@code -c}). A server that cannot give a
   * PTY makes this throw; it never falls back to pipes.
   */
  @Override
  public io.sandboxes.SpawnHandle spawn(String command, io.sandboxes.SpawnOptions options) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(options, "options");
    boolean pty = options.pty() != null;
    ObjectNode process;
    if (pty) {
      process = Json.object().put("cmd", "/bin/bash");
      var args = process.putArray("args").add("-i").add("-l");
      if (!SHELLS.contains(command.strip())) {
        args.add("-c").add(command);
      }
      ObjectNode envs = Json.object().put("TERM", "xterm-256color").put("LANG", "C.UTF-8").put("LC_ALL", "C.UTF-8");
      options.env().forEach(envs::put);
      process.set("envs", envs);
      if (options.cwd() != null) {
        process.put("cwd", options.cwd());
      }
    } else {
      process = loginShell(command, options.env(), options.cwd());
    }
    ObjectNode body = Json.object();
    body.set("process", process);
    if (pty) {
      body.putObject("pty").putObject("size").put("cols", options.pty().cols()).put("rows", options.pty().rows());
    } else {
      body.put("stdin", true);
    }
    Duration timeout = options.timeout() != null ? options.timeout() : DEFAULT_SPAWN_TIMEOUT;
    String context = (pty ? "pty spawn" : "spawn") + " in sandbox " + id;
    Envd current = envd;
    ConnectStream stream = current.stream("process.Process/Start", body, null, timeout, context, null);
    JsonNode first;
    try {
      first = stream.next();
    } catch (io.sandboxes.SandboxRpcException e) {
      stream.close();
      if (pty) {
        throw new SandboxException("a pty was requested and the sandbox could not give one (" + e.getMessage()
            + "); refusing rather than falling back to pipes", e);
      }
      throw e;
    } catch (RuntimeException e) {
      stream.close();
      throw e;
    }
    if (first == null || !first.path("event").has("start")) {
      stream.close();
      throw new SandboxException(context + ": the daemon did not report the process as started");
    }
    int pid = pidOf(first, -1);
    if (pid < 0) {
      // without a real pid the process can be neither written to nor killed, and a wrapped value
      // (4294967297 read as 1) would aim signals at the sandbox's init
      stream.close();
      throw new SandboxException(context + ": the daemon reported pid " + Json.abbreviate(first.path("event").path("start").get("pid"))
          + ", which is not a process id; the process may be running unaddressed until its deadline");
    }
    return new E2BSpawn(id, current, stream, pid, pty);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The archive is written to {@code /tmp/mol-import-<id>.tar} through the file API in pieces of
   * {@value TarTransfer#IMPORT_PIECE_BYTES} bytes, then extracted with {@code tar xf ...
   * --no-same-owner --no-same-permissions} (300 s deadline); the spool files are removed last on
   * every path. A step that exits non-zero fails as {@code importFiles: <step> failed (<code>):
   * <stderr>}; a failure to run a step at all is thrown as it is.
   */
  @Override
  public void importFiles(String path, java.io.InputStream tar) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(tar, "tar");
    TarTransfer.importFiles(this, path, tar);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs {@code tar cf /tmp/mol-export-<id>.tar -C <parent> <name>}, reads the archive's
   * exact bytes through the file API, and removes it last on every path. The root and relative
   * paths are refused before anything runs.
   */
  @Override
  public java.io.InputStream exportFiles(String path) {
    Objects.requireNonNull(path, "path");
    return TarTransfer.exportFiles(this, path);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Through {@link #files()}: one raw upload to envd's {@code /files}.
   */
  @Override
  public void writeBytes(String path, byte[] content) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(content, "content");
    files().putBytes(path, content, FileOptions.defaults());
  }

  @Override
  public byte[] readBytes(String path) {
    Objects.requireNonNull(path, "path");
    return files().readBytes(path);
  }

  @Override
  public void deleteFile(String path) {
    Objects.requireNonNull(path, "path");
    files().remove(path);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Lists through envd's {@code ListDir} ({@link Filesystem#list(String)}) rather than parsing
   * {@code ls}: names come back exactly (runs of spaces included), sizes as numbers, and a symlink,
   * to a file or a folder, as {@link DirEntry.Type#SYMLINK} with its resolved target.
   */
  @Override
  public List<DirEntry> readDir(String path) {
    Objects.requireNonNull(path, "path");
    List<DirEntry> out = new ArrayList<>();
    for (EntryInfo e : files().list(path)) {
      DirEntry.Type type = e.isSymlink() ? DirEntry.Type.SYMLINK : e.type() == FileType.DIR ? DirEntry.Type.DIRECTORY : DirEntry.Type.FILE;
      out.add(new DirEntry(e.name(), type, e.size(), e.symlinkTarget()));
    }
    return out;
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@link Filesystem#watchDir} on the whole tree, without a deadline; the returned handle
   * stops the watch and waits for its thread.
   */
  @Override
  public io.sandboxes.Subscription onFileChange(String path, java.util.function.Consumer<io.sandboxes.FileChange> listener) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(listener, "listener");
    return files().watchDir(path, e -> listener.accept(new io.sandboxes.FileChange(e.name(), e.type())),
        WatchOptions.defaults().withRecursive(true).withTimeout(Duration.ZERO));
  }

  @Override
  public HibernationOutcome hibernate() {
    boolean pausedNow = api.pause(id, true);
    return new HibernationOutcome(true, "pause", pausedNow ? null : "the sandbox was already paused");
  }

  @Override
  public HibernationOutcome resume() {
    LiveSandbox fresh = api.connect(id, api.provider().defaultTimeout());
    this.envd = fresh.envd;
    return new HibernationOutcome(true, "resume", null);
  }

  @Override
  public void keepAlive(Duration duration) {
    api.setTimeout(id, duration);
  }

  /**
   * Asks the control plane about this sandbox now, without connecting to it.
   *
   * @return what the control plane says about this sandbox now
   */
  public SandboxInfo info() {
    return api.info(id);
  }

  /**
   * Sets the sandbox to end {@code timeout} from now.
   *
   * @param timeout positive
   */
  public void setTimeout(Duration timeout) {
    api.setTimeout(id, timeout);
  }

  /**
   * Reads this sandbox's resource-use samples over its life so far.
   *
   * @return the samples, oldest first
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#metrics(String, Instant, Instant)
   */
  public List<SandboxMetrics> metrics() {
    return api.metrics(id, null, null);
  }

  /**
   * Reads this sandbox's resource-use samples taken between two moments, as E2B's
   * {@code sandbox.getMetrics({start, end})}.
   *
   * @param start the earliest sample wanted, or null for the sandbox's start
   * @param end the latest sample wanted, or null for now
   * @return the samples in the range, oldest first
   * @throws IllegalArgumentException when {@code start} is after {@code end}
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#metrics(String, Instant, Instant)
   */
  public List<SandboxMetrics> metrics(@Nullable Instant start, @Nullable Instant end) {
    return api.metrics(id, start, end);
  }

  /**
   * A URL that downloads a file of this sandbox with a plain GET, no headers needed, as E2B's
   * {@code sandbox.downloadUrl(path)}: signed with this sandbox's access token, without
   * expiring.
   *
   * @param path the file's path in the sandbox, exactly as it will be read
   * @return the URL
   * @see #downloadUrl(String, String, Duration)
   */
  public URI downloadUrl(String path) {
    return downloadUrl(path, null, null);
  }

  /**
   * A URL that downloads a file of this sandbox with a plain GET, as E2B's
   * {@code sandbox.downloadUrl(path, {user, useSignatureExpiration})}. A secured sandbox's URL is
   * signed ({@code signature} and, with an expiry, {@code signature_expiration} in the query);
   * after the expiry the daemon answers 401 "signature is already expired". The signature is
   * computed here, from the token the client holds: nothing is sent.
   *
   * @param path the file's path in the sandbox, exactly as it will be read
   * @param user the user the file is read as, or null for the sandbox's default user
   * @param expiresIn how long the URL works from now (whole seconds, rounded down), or null for a
   *     URL that does not expire
   * @return the URL
   * @throws IllegalStateException when an expiry is asked of a sandbox that is not secured (it has
   *     no token to sign with), as E2B's SDK refuses it
   * @throws IllegalArgumentException when {@code expiresIn} is not positive
   */
  public URI downloadUrl(String path, @Nullable String user, @Nullable Duration expiresIn) {
    java.util.Objects.requireNonNull(path, "path");
    return fileUrl(path, "read", user, expiresIn);
  }

  /**
   * A URL that uploads to this sandbox with a plain multipart POST, no headers needed, as E2B's
   * {@code sandbox.uploadUrl(path)}: signed, without expiring.
   *
   * @param path where the upload is written, or null to take each part's file name as its path
   * @return the URL
   * @see #uploadUrl(String, String, Duration)
   */
  public URI uploadUrl(@Nullable String path) {
    return uploadUrl(path, null, null);
  }

  /**
   * A URL that uploads to this sandbox with a plain multipart POST, as E2B's
   * {@code sandbox.uploadUrl(path, {user, useSignatureExpiration})}; signed as
   * {@link #downloadUrl(String, String, Duration)} is, for writing.
   *
   * @param path where the upload is written, or null to take each part's file name as its path
   *     (the signature then covers the empty path)
   * @param user the user the file is written as, or null for the sandbox's default user
   * @param expiresIn how long the URL works from now (whole seconds, rounded down), or null for a
   *     URL that does not expire
   * @return the URL
   * @throws IllegalStateException when an expiry is asked of a sandbox that is not secured
   * @throws IllegalArgumentException when {@code expiresIn} is not positive
   */
  public URI uploadUrl(@Nullable String path, @Nullable String user, @Nullable Duration expiresIn) {
    return fileUrl(path == null ? "" : path, "write", user, expiresIn);
  }

  private URI fileUrl(String path, String operation, @Nullable String user, @Nullable Duration expiresIn) {
    if (expiresIn != null && (expiresIn.isNegative() || expiresIn.getSeconds() < 1)) {
      throw new IllegalArgumentException("expiresIn must be at least a second, got " + expiresIn);
    }
    Envd current = envd;
    if (!current.secured() && expiresIn != null) {
      throw new IllegalStateException("sandbox " + id + " is not secured (it has no access token): its URLs are not signed,"
          + " so they cannot expire");
    }
    java.util.StringJoiner query = new java.util.StringJoiner("&");
    if (user != null && !user.isEmpty()) {
      query.add("username=" + urlEncode(user));
    }
    if (!path.isEmpty()) {
      query.add("path=" + urlEncode(path));
    }
    if (current.secured()) {
      Long expiration = expiresIn == null ? null : Instant.now().getEpochSecond() + expiresIn.getSeconds();
      query.add("signature=" + urlEncode(current.signature(path, operation, user == null ? "" : user, expiration)));
      if (expiration != null) {
        query.add("signature_expiration=" + expiration);
      }
    }
    String base = api.directEnvdUrl(id, previewDomain).toString();
    String files = (base.endsWith("/") ? base : base + "/") + "files";
    return URI.create(query.length() == 0 ? files : files + "?" + query);
  }

  private static String urlEncode(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
  }

  /**
   * Captures this sandbox's filesystem as a snapshot, usable as a template id; the sandbox keeps
   * running. Re-using a name replaces that snapshot.
   *
   * @param name the snapshot's name, or null for a generated one
   * @return the snapshot, whose id is a template id
   */
  public SnapshotInfo snapshot(@Nullable String name) {
    return api.createSnapshot(id, name);
  }

  /**
   * Forks this sandbox once: a new sandbox that starts from this one's state now and diverges
   * from then on, while this one keeps running untouched.
   *
   * @param timeout how long the fork lives from now, positive
   * @return the fork; close it to kill it
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @throws io.sandboxes.SandboxApiException when the fork could not be made or did not start
   * @see E2BApi#fork(String, int, Duration) what a fork keeps of its parent
   */
  public LiveSandbox fork(Duration timeout) {
    List<ForkResult> results = api.fork(id, 1, timeout);
    if (results.isEmpty()) {
      throw new SandboxException("fork sandbox " + id + ": the server answered with no fork");
    }
    return results.get(0).orThrow();
  }

  /**
   * Forks this sandbox {@code count} times, the forks succeeding or failing independently.
   *
   * @param count how many forks, 1 to 100
   * @param timeout how long each fork lives from now, positive
   * @return one result per requested fork, in order
   * @throws io.sandboxes.SandboxNotFoundException when this sandbox is gone
   * @see E2BApi#fork(String, int, Duration)
   */
  public List<ForkResult> fork(int count, Duration timeout) {
    return api.fork(id, count, timeout);
  }

  /**
   * Pauses the sandbox, keeping its memory and processes. {@link E2BApi#connect} resumes it;
   * until then its daemon does not answer.
   *
   * @return true when it is paused now, false when it already was
   */
  public boolean pause() {
    return api.pause(id, true);
  }

  /**
   * Pauses the sandbox, as E2B's {@code sandbox.pause({keepMemory})}.
   *
   * @param keepMemory true to keep its memory and processes (they carry on after a resume), false
   *     to keep only its filesystem (a resume boots it afresh)
   * @return true when it is paused now, false when it already was
   */
  public boolean pause(boolean keepMemory) {
    return api.pause(id, keepMemory);
  }

  /**
   * Connects this handle again, as E2B's {@code sandbox.connect({timeoutMs, onResume})}: a paused
   * sandbox is resumed as {@code onResume} says and lives {@code timeout} from now; a running one's
   * deadline only moves later. Calls through this handle then reach the resumed sandbox.
   *
   * @param timeout how long it should live from now at least, positive
   * @param onResume from memory ({@link OnResume#RESTORE}) or a cold boot ({@link OnResume#REBOOT})
   * @throws io.sandboxes.SandboxApiException when the server refuses that resume; it never resumes
   *     another way instead
   */
  public void connect(Duration timeout, OnResume onResume) {
    LiveSandbox fresh = api.connect(id, timeout, onResume);
    this.envd = fresh.envd;
  }

  /**
   * Kills the sandbox now.
   *
   * @return true when it was killed, false when it was already gone
   */
  public boolean kill() {
    closed.set(true);
    boolean wasThere = api.kill(id);
    killed = true;
    return wasThere;
  }

  /** Kills the sandbox; a sandbox already gone is not an error. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      api.kill(id);
      killed = true;
    }
  }

  Envd envd() {
    return envd;
  }

  E2BApi api() {
    return api;
  }

  @Override
  public String toString() {
    return "LiveSandbox[" + id + "]";
  }
}
