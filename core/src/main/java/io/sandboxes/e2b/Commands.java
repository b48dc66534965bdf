package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.StreamCutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The processes of one sandbox, as E2B's {@code sandbox.commands}: commands in the foreground
 * ({@link #run}) or the background ({@link #start}), and every running process by its pid, whoever
 * started it (this handle, another JVM, E2B's JS or Python SDK): {@link #list()},
 * {@link #connect(int)}, {@link #sendStdin(int, String)}, {@link #closeStdin(int)},
 * {@link #kill(int)}.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=commands :
 * CommandHandle server = sandbox.commands().start("python3 -m http.server 8000",
 *     ExecOptions.defaults().withTimeout(Duration.ZERO));   // no deadline: runs until killed
 * int pid = server.pid();
 * server.disconnect();                                     // it keeps running
 * // later, from this JVM or another one connected to the same sandbox:
 * for (ProcessInfo p : sandbox.commands().list()) {
 *   System.out.println(p.pid() + " " + p.args());
 * }
 * boolean wasRunning = sandbox.commands().kill(pid);       // false when it had ended
 * }
 *
 * <p>Obtained from {@link LiveSandbox#commands()}; cheap, holds nothing, and follows the sandbox
 * handle across a resume.
 *
 * @since 0.1
 */
public final class Commands {
  private final LiveSandbox sandbox;

  Commands(LiveSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /**
   * Runs a command and waits for it, as {@link LiveSandbox#exec(String)} does (E2B's
   * {@code commands.run(cmd)}).
   *
   * @param command the command line, run by {@code /bin/bash -l -c}
   * @return its exit code and output; a non-zero exit is returned, not thrown
   */
  public ExecResult run(String command) {
    return sandbox.exec(command);
  }

  /**
   * Runs a command and waits for it, as {@link LiveSandbox#exec(String, ExecOptions)} does.
   *
   * @param command the command line, run by {@code /bin/bash -l -c}
   * @param options working directory, environment, user, deadline, output listeners, stdin
   * @return its exit code and output; a non-zero exit is returned, not thrown
   * @throws io.sandboxes.CommandTimeoutException when it outlived its deadline
   */
  public ExecResult run(String command, ExecOptions options) {
    return sandbox.exec(command, options);
  }

  /**
   * Starts a command in the background with the default options; see
   * {@link #start(String, ExecOptions)}.
   *
   * @param command the command line, run by {@code /bin/bash -l -c}
   * @return a handle to the running command
   */
  public CommandHandle start(String command) {
    return start(command, ExecOptions.defaults());
  }

  /**
   * Starts a command in the background and returns once the sandbox reports it started, as E2B's
   * {@code commands.run(cmd, {background: true})}. The command's deadline
   * ({@link ExecOptions#timeout()}, 60 s by default as on E2B) is the sandbox's to enforce and
   * holds whether or not anyone listens: {@link Duration#ZERO} lets it run until it ends or is
   * killed. Its input is open only with {@link ExecOptions#withStdin(boolean)}.
   *
   * <p>The handle collects the output while it is connected; {@link CommandHandle#disconnect()}
   * stops listening and leaves the command running, and {@link #connect(int)} attaches again.
   *
   * @param command the command line, run by {@code /bin/bash -l -c}
   * @param options working directory, environment, user, deadline, output listeners, stdin
   * @return a handle to the running command
   * @throws SandboxException when the sandbox did not start it (an unknown user or working
   *     directory is the daemon's {@link SandboxRpcException}); never a handle to nothing
   */
  public CommandHandle start(String command, ExecOptions options) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(options, "options");
    String context = "start a background command in sandbox " + sandbox.id();
    ConnectStream stream = sandbox.envd().stream("process.Process/Start", Processes.startBody(command, options), options.user(),
        options.timeout(), context, null);
    int pid = startedPid(stream, context, -1);
    return new CommandHandle(sandbox, stream, pid, command, options.timeout(), options.user(), options.onStdout(),
        options.onStderr());
  }

  /**
   * Lists the processes running in the sandbox, as E2B's {@code commands.list()}: each with its pid,
   * the program and arguments it was started with, the environment and working directory given at
   * its start, and its tag. Commands and PTYs started by any client are listed; processes they
   * started in turn are not.
   *
   * @return the running processes; empty only when the sandbox says none runs
   * @throws SandboxException when the listing could not be had or read (never an empty list in its
   *     place)
   */
  public List<ProcessInfo> list() {
    String context = "list the processes of sandbox " + sandbox.id();
    JsonNode answer = sandbox.envd().unary("process.Process/List", Json.object(), null, context);
    JsonNode processes = answer.get("processes");
    if (processes == null || processes.isNull()) {
      if (!answer.isObject()) {
        throw new SandboxException(context + ": the daemon's answer is not a listing: " + Json.abbreviate(answer));
      }
      return List.of(); // proto3 JSON leaves an empty list out
    }
    if (!processes.isArray()) {
      throw new SandboxException(context + ": 'processes' is not a list: " + Json.abbreviate(processes));
    }
    List<ProcessInfo> out = new ArrayList<>();
    for (JsonNode p : processes) {
      Integer pid = Json.exactInt(p.get("pid"));
      JsonNode config = p.get("config");
      if (pid == null || pid <= 0 || config == null || !config.isObject()) {
        throw new SandboxException(context + ": unreadable process entry " + Json.abbreviate(p));
      }
      List<String> args = new ArrayList<>();
      JsonNode rawArgs = config.path("args");
      if (!rawArgs.isMissingNode() && !rawArgs.isArray()) {
        throw new SandboxException(context + ": unreadable arguments of process " + pid + ": " + Json.abbreviate(rawArgs));
      }
      rawArgs.forEach(a -> args.add(a.asText()));
      Map<String, String> envs = Json.stringMap(config.get("envs"));
      String cwd = Json.text(config, "cwd");
      String tag = Json.text(p, "tag");
      out.add(new ProcessInfo(pid, tag == null || tag.isEmpty() ? null : tag, config.path("cmd").asText(""), args, envs,
          cwd == null || cwd.isEmpty() ? null : cwd));
    }
    return out;
  }

  /**
   * Attaches to a running process by its pid, as E2B's {@code commands.connect(pid)}; see
   * {@link #connect(int, Consumer, Consumer)}.
   *
   * @param pid the process's id in the sandbox
   * @return a handle that receives the process's output from now on
   * @throws SandboxRpcException with code {@code not_found} when no such process runs
   */
  public CommandHandle connect(int pid) {
    return connect(pid, null, null);
  }

  /**
   * Attaches to a running process by its pid, as E2B's {@code commands.connect(pid, {onStdout,
   * onStderr})}: a process started by another handle, another JVM or another SDK. The handle
   * receives output from now on (what the process wrote before is not replayed), and its
   * {@link CommandHandle#waitFor()} returns the exit code with that output. The attachment itself
   * has no deadline: the process's own, set when it was started, still holds. A process that
   * ended moments ago is still reported, with its exit and no output.
   *
   * @param pid the process's id in the sandbox, positive
   * @param onStdout called with each piece of standard output (for a PTY, the terminal's output)
   *     as it arrives, on the handle's reader thread, or {@code null}
   * @param onStderr the same for standard error, or {@code null}
   * @return a handle that receives the process's output from now on
   * @throws IllegalArgumentException when {@code pid} is not positive
   * @throws SandboxRpcException with code {@code not_found} when no such process runs
   */
  public CommandHandle connect(int pid, @Nullable Consumer<String> onStdout, @Nullable Consumer<String> onStderr) {
    requirePid(pid);
    String context = "connect to process " + pid + " in sandbox " + sandbox.id();
    ConnectStream stream = sandbox.envd().stream("process.Process/Connect", selector(pid), null, Duration.ZERO, context, null);
    startedPid(stream, context, pid);
    return new CommandHandle(sandbox, stream, pid, null, Duration.ZERO, null, onStdout, onStderr);
  }

  /**
   * Kills a process by its pid (SIGKILL), as E2B's {@code commands.kill(pid)}.
   *
   * @param pid the process's id in the sandbox, positive
   * @return {@code true} when it was running and was signalled, {@code false} when the sandbox has
   *     no such running process
   * @throws IllegalArgumentException when {@code pid} is not positive
   * @throws SandboxException when the kill could not be asked for; never {@code false} in its place
   */
  public boolean kill(int pid) {
    requirePid(pid);
    try {
      sandbox.envd().unary("process.Process/SendSignal", selector(pid).put("signal", "SIGNAL_SIGKILL"), null,
          "kill process " + pid + " in sandbox " + sandbox.id());
      return true;
    } catch (SandboxRpcException e) {
      if ("not_found".equals(e.code())) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Writes text, as UTF-8, to a process's standard input, as E2B's {@code commands.sendStdin(pid,
   * data)}. The process must have been started with its input open
   * ({@link ExecOptions#withStdin(boolean)}, E2B's {@code stdin: true}).
   *
   * @param pid the process's id in the sandbox, positive
   * @param data the text to write
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal (such as an input that is closed)
   */
  public void sendStdin(int pid, String data) {
    Objects.requireNonNull(data, "data");
    sendStdin(pid, data.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Writes bytes to a process's standard input; see {@link #sendStdin(int, String)}.
   *
   * @param pid the process's id in the sandbox, positive
   * @param data the bytes to write
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal
   */
  public void sendStdin(int pid, byte[] data) {
    requirePid(pid);
    Objects.requireNonNull(data, "data");
    ObjectNode req = selector(pid);
    req.putObject("input").put("stdin", Base64.getEncoder().encodeToString(data));
    sandbox.envd().unary("process.Process/SendInput", req, null, "write to the input of process " + pid + " in sandbox "
        + sandbox.id());
  }

  /**
   * Closes a process's standard input, so that a program reading it sees its end, as E2B's
   * {@code commands.closeStdin(pid)}. Not for a PTY: write Ctrl-D ({@code "\u0004"}) to it instead.
   *
   * @param pid the process's id in the sandbox, positive
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal (a PTY)
   */
  public void closeStdin(int pid) {
    requirePid(pid);
    sandbox.envd().unary("process.Process/CloseStdin", selector(pid), null, "close the input of process " + pid
        + " in sandbox " + sandbox.id());
  }

  /** Kills a process whose listener failed; a failure to do so changes nothing for the caller. */
  void killQuietly(int pid) {
    try {
      kill(pid);
    } catch (RuntimeException ignored) {
      // already gone, or the sandbox with it
    }
  }

  static ObjectNode selector(int pid) {
    ObjectNode req = Json.object();
    req.putObject("process").put("pid", pid);
    return req;
  }

  static void requirePid(int pid) {
    if (pid <= 0) {
      throw new IllegalArgumentException("a process id is positive, got " + pid);
    }
  }

  /**
   * Reads a process stream's first message, which must report the process as started; closes the
   * stream on any failure.
   *
   * @param expected the pid asked for, or -1 when any positive pid will do
   * @return the process's pid
   */
  int startedPid(ConnectStream stream, String context, int expected) {
    try {
      JsonNode first = stream.next();
      if (first == null || !first.path("event").has("start")) {
        throw new SandboxException(context + ": the daemon did not report the process as started");
      }
      int pid = Processes.pidOf(first, -1);
      if (pid < 0) {
        // without a real pid the process can be neither written to nor killed
        throw new SandboxException(context + ": the daemon reported pid " + Json.abbreviate(first.path("event").path("start").get("pid"))
            + ", which is not a process id; the process may be running unaddressed until its deadline");
      }
      if (expected > 0 && pid != expected) {
        throw new SandboxException(context + ": the daemon attached to process " + pid + " instead");
      }
      return pid;
    } catch (StreamCutException cut) {
      stream.close();
      throw Thread.currentThread().isInterrupted() ? cut : Processes.explainCut(sandbox, cut, "the command");
    } catch (RuntimeException e) {
      stream.close();
      throw e;
    }
  }

  @Override
  public String toString() {
    return "Commands[" + sandbox.id() + "]";
  }
}
