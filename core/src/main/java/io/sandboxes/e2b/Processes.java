package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Utf8Accumulator;
import io.sandboxes.e2b.internal.Watchdog;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's process plumbing behind {@link LiveSandbox#exec} and {@link LiveSandbox#spawn}: the
 * start requests, reading a command's events to its exit report, the liveness probe, exit codes,
 * and what a stream that broke off means. Stateless; each call is handed the sandbox it works on.
 */
final class Processes {
  /** Extra time the client waits past a command's own deadline for the daemon to report it. */
  static final Duration DEADLINE_GRACE = Duration.ofSeconds(10);
  /** How long a command may run before the client checks whether its process still lives. */
  static final Duration SETTLE_PROBE = Duration.ofMillis(1_500);
  /** Once the process is seen gone, how long its exit report may take to arrive. */
  static final Duration EXIT_REPORT_GRACE = Duration.ofMillis(2_000);
  /** The liveness probe's own deadline. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

  private Processes() {}

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

  /** The body of {@link LiveSandbox#exec}. */
  static ExecResult exec(LiveSandbox sandbox, String command, ExecOptions options) {
    String id = sandbox.id();
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    String context = "exec in sandbox " + id;
    Utf8Accumulator stdout = new Utf8Accumulator();
    Utf8Accumulator stderr = new Utf8Accumulator();
    java.util.concurrent.atomic.AtomicLong lastEvent = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    int pid = -1;
    ConnectStream stream = sandbox.envd().stream("process.Process/Start", startBody(command, options), options.user(), options.timeout(),
        context, null);
    SettleProbe probe = null;
    try (stream; Watchdog ignored = options.timeout().isZero() ? null
        : Watchdog.arm(id, options.timeout().plus(DEADLINE_GRACE), stream::close)) {
      JsonNode first = stream.next();
      if (first == null || !first.path("event").has("start")) {
        throw new SandboxException(context + ": the daemon did not report the process as started");
      }
      // a pid that is not a positive int is no process: never probed nor signalled
      pid = pidOf(first, -1);
      // the events are read here, on the caller's thread; a command still running after the settle
      // window has its process probed beside it, which gives the stream up if the process is gone
      probe = new SettleProbe(sandbox, pid, options.user(), lastEvent, stream);
      JsonNode report;
      try (Watchdog settle = Watchdog.arm(id, SETTLE_PROBE, probe::start)) {
        report = readEvents(stream, stdout, stderr, options, context, lastEvent);
      } catch (SandboxException e) {
        String why = probe.stop();
        if (why != null) {
          return unknownOutcome(why, stdout, stderr, started);
        }
        throw e;
      }
      return result(report, stdout, stderr, started);
    } catch (SandboxException e) {
      if (timedOut(e, options, started)) {
        stdout.finish();
        stderr.finish();
        throw new CommandTimeoutException(command, options.timeout(), stdout.text(), stderr.text(), e);
      }
      if (e instanceof io.sandboxes.e2b.internal.StreamCutException cut && !Thread.currentThread().isInterrupted()) {
        throw explainCut(sandbox, cut, "the command");
      }
      throw e;
    } catch (CallbackFailure e) {
      killQuietly(sandbox, pid);
      throw e.getCause();
    } finally {
      if (probe != null) {
        probe.stop();
      }
    }
  }

  /**
   * What runs beside an exec still going after {@link #SETTLE_PROBE}: it asks whether the started
   * process is gone and, when it is, gives the stream up (closes it) once nothing but keepalives
   * came on it for {@link #EXIT_REPORT_GRACE}: a background child holding the output open would
   * otherwise keep the caller waiting for an exit report that never comes. A process still there is
   * left to its deadline. Started by the settle timer on a thread of its own (the probe is a call to
   * the sandbox); {@link #stop} ends that thread before the exec returns.
   */
  private static final class SettleProbe {
    private final LiveSandbox sandbox;
    private final int pid;
    private final @Nullable String user;
    private final java.util.concurrent.atomic.AtomicLong lastEvent;
    private final ConnectStream stream;
    private @Nullable Thread thread;
    private boolean stopped;
    private volatile @Nullable String gaveUp;

    SettleProbe(LiveSandbox sandbox, int pid, @Nullable String user, java.util.concurrent.atomic.AtomicLong lastEvent,
        ConnectStream stream) {
      this.sandbox = sandbox;
      this.pid = pid;
      this.user = user;
      this.lastEvent = lastEvent;
      this.stream = stream;
    }

    /** On the settle timer: starts the probe, unless the exec is over. */
    synchronized void start() {
      if (!stopped) {
        thread = io.sandboxes.e2b.internal.Tasks.start(sandbox.id(), "sandboxes-exec-" + sandbox.id(), this::run);
      }
    }

    private void run() {
      if (!processGone(sandbox, pid, user)) {
        return;
      }
      // the report gets a window of its own once the process is found gone, and the stream is held
      // only once it has also gone quiet for as long: a stream still draining output is not given up
      while (true) {
        try {
          Thread.sleep(EXIT_REPORT_GRACE);
        } catch (InterruptedException e) {
          return;
        }
        if (System.nanoTime() - lastEvent.get() >= EXIT_REPORT_GRACE.toNanos()) {
          gaveUp = "the started process (pid " + pid + ") is gone but its output stream is still held, "
              + "so its real outcome cannot be observed";
          stream.close();
          return;
        }
      }
    }

    /**
     * Ends the probe (waiting for its thread, also when the caller is interrupted: its flag is kept).
     *
     * @return why the probe gave the stream up, or null when it did not
     */
    @Nullable String stop() {
      Thread t;
      synchronized (this) {
        stopped = true;
        t = thread;
      }
      if (t != null) {
        t.interrupt();
        io.sandboxes.e2b.internal.Tasks.joinUninterruptibly(t);
      }
      return gaveUp;
    }
  }

  /**
   * What a stream that broke off means, asked of the control plane as E2B's SDKs do: a sandbox
   * that is gone is {@link io.sandboxes.SandboxNotFoundException}, one that was paused says so;
   * a sandbox still running, or an answer that could not be had, leaves the break as it was.
   */
  static SandboxException explainCut(LiveSandbox sandbox, io.sandboxes.e2b.internal.StreamCutException cut, String what) {
    String id = sandbox.id();
    SandboxInfo now;
    try {
      now = sandbox.api().info(id);
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
  private static void killQuietly(LiveSandbox sandbox, int pid) {
    if (pid <= 0) {
      return;
    }
    try {
      sandbox.envd().unary("process.Process/SendSignal", Json.object().put("signal", "SIGNAL_SIGKILL")
          .set("process", Json.object().put("pid", pid)), null, "kill process " + pid);
    } catch (RuntimeException ignored) {
      // already gone, or the sandbox with it
    }
  }

  /** Reads the process's events to its exit report, keeping and passing on its output. @return the report */
  private static JsonNode readEvents(ConnectStream stream, Utf8Accumulator stdout, Utf8Accumulator stderr, ExecOptions options,
      String context, java.util.concurrent.atomic.AtomicLong lastEvent) {
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
        // without a listener the bytes are only kept, and decoded once at the end
        String text = toErr ? add(stderr, message.output(), listenErr) : add(stdout, message.output(), listenOut);
        deliver(toErr ? options.onStderr() : options.onStdout(), text);
      } else if (event.has("end")) {
        report = event.get("end");
      }
    }
    if (report == null) {
      throw new SandboxException(context + ": the process stream ended without an exit report");
    }
    return report;
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

  private static ExecResult result(JsonNode report, Utf8Accumulator stdout, Utf8Accumulator stderr, long started) {
    stdout.finish();
    stderr.finish();
    if (readExitCode(report) == null) {
      return unknownOutcome("the daemon's exit report carries exitCode " + Json.abbreviate(report.get("exitCode"))
          + ", which is not an exit code", stdout, stderr, started);
    }
    return new ExecResult(exitCode(report), stdout.text(), stderr.text(), Duration.ofNanos(System.nanoTime() - started),
        Json.text(report, "error"));
  }

  private static ExecResult unknownOutcome(String why, Utf8Accumulator stdout, Utf8Accumulator stderr, long started) {
    String note = "e2b: exit code unknown — " + why + "; reporting failure";
    String err = stderr.text();
    return new ExecResult(LiveSandbox.EXIT_CODE_UNKNOWN, stdout.text(), err.isEmpty() ? note : err + "\n" + note,
        Duration.ofNanos(System.nanoTime() - started));
  }

  /**
   * Whether the process is positively gone, probed with {@code kill -0} as the user the process was
   * started as: another user's {@code kill -0} fails with "not permitted" for a live process (a
   * command run as root, probed as the default user, was taken for gone after 1.5 s). Any failure
   * to look counts as alive, so the caller keeps waiting rather than inventing an outcome.
   */
  static boolean processGone(LiveSandbox sandbox, int pid, @Nullable String user) {
    String id = sandbox.id();
    if (pid <= 0) {
      return false;
    }
    String probe = "kill -0 " + pid + " 2>/dev/null && echo MOL_ALIVE || echo MOL_GONE";
    ExecOptions as = user == null ? ExecOptions.defaults() : ExecOptions.defaults().withUser(user);
    try (ConnectStream s = sandbox.envd().stream("process.Process/Start", startBody(probe, as), user, PROBE_TIMEOUT,
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

  /**
   * envd omits {@code exitCode} when it is 0 (proto3 defaults are left out), so a missing code is
   * 0 only when the process is reported as having exited; a process ended by a signal reports -1.
   */
  static int exitCode(JsonNode end) {
    Integer code = readExitCode(end);
    return code == null ? LiveSandbox.EXIT_CODE_UNKNOWN : code;
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

  private static final java.util.Set<String> SHELLS = java.util.Set.of("bash", "/bin/bash", "sh", "/bin/sh", "");

  /** The body of {@link LiveSandbox#spawn}. */
  static io.sandboxes.SpawnHandle spawn(LiveSandbox sandbox, String command, io.sandboxes.SpawnOptions options) {
    String id = sandbox.id();
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
    Duration timeout = options.timeout() != null ? options.timeout() : LiveSandbox.DEFAULT_SPAWN_TIMEOUT;
    String context = (pty ? "pty spawn" : "spawn") + " in sandbox " + id;
    Envd current = sandbox.envd();
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
}
