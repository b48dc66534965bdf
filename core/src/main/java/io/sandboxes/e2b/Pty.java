package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Json;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The terminals of one sandbox, as E2B's {@code sandbox.pty}: start an interactive shell on a
 * pseudo-terminal, and reach any terminal by its pid, whoever started it: attach to its output,
 * type into it, resize it, kill it.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=pty :
 * CommandHandle shell = sandbox.pty().create(PtyOptions.of(80, 24).withCwd("/tmp")
 *     .withOnData(System.out::print));
 * sandbox.pty().sendInput(shell.pid(), "ls -la\n");
 * sandbox.pty().resize(shell.pid(), 120, 40);
 * sandbox.pty().kill(shell.pid());
 * }
 *
 * <p>A terminal's output is one stream (what the shell and its programs write to the terminal,
 * echoed input included); the handle's {@link CommandHandle#stdout()} collects it. Write to a
 * terminal with {@link #sendInput}, not with the handle's {@code sendStdin}, which writes to a
 * pipe a terminal does not have. Obtained from {@link LiveSandbox#pty()}; cheap and holds nothing.
 *
 * @since 0.1
 */
public final class Pty {
  private final LiveSandbox sandbox;

  Pty(LiveSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /**
   * Starts an interactive login shell ({@code /bin/bash -i -l}) on a new terminal, as E2B's
   * {@code pty.create}.
   *
   * @param options size, working directory, environment, user, deadline and output listener
   * @return a handle to the shell: its pid, its output, {@link CommandHandle#waitFor()} for its
   *     exit; {@link CommandHandle#disconnect()} leaves it running
   * @throws SandboxException when the sandbox did not start it (an unknown user or working
   *     directory is the daemon's {@link SandboxRpcException}); it never falls back to pipes
   */
  public CommandHandle create(PtyOptions options) {
    Objects.requireNonNull(options, "options");
    ObjectNode envs = Json.object();
    envs.put("TERM", "xterm-256color").put("LANG", "C.UTF-8").put("LC_ALL", "C.UTF-8");
    options.env().forEach(envs::put);
    ObjectNode body = Json.object();
    ObjectNode process = body.putObject("process").put("cmd", "/bin/bash");
    process.putArray("args").add("-i").add("-l");
    process.set("envs", envs);
    if (options.cwd() != null) {
      process.put("cwd", options.cwd());
    }
    body.putObject("pty").putObject("size").put("cols", options.cols()).put("rows", options.rows());
    String context = "start a terminal in sandbox " + sandbox.id();
    ConnectStream stream = sandbox.envd().stream("process.Process/Start", body, options.user(), options.timeout(), context, null);
    int pid = sandbox.commands().startedPid(stream, context, -1);
    return new CommandHandle(sandbox, stream, pid, "/bin/bash -i -l", options.timeout(), options.user(), options.onData(), null);
  }

  /**
   * Attaches to a running terminal by its pid, as E2B's {@code pty.connect(pid)}; output from now
   * on is collected by the handle.
   *
   * @param pid the terminal's process id, positive
   * @return a handle that receives the terminal's output from now on
   * @throws SandboxRpcException with code {@code not_found} when no such process runs
   */
  public CommandHandle connect(int pid) {
    return connect(pid, null);
  }

  /**
   * Attaches to a running terminal by its pid, handing its output to a listener, as E2B's
   * {@code pty.connect(pid, {onData})}. What it wrote before is not replayed; the attachment has
   * no deadline of its own (the terminal's, set when it was started, still holds).
   *
   * @param pid the terminal's process id, positive
   * @param onData called with its output as it arrives, or null
   * @return a handle that receives the terminal's output from now on
   * @throws IllegalArgumentException when {@code pid} is not positive
   * @throws SandboxRpcException with code {@code not_found} when no such process runs
   */
  public CommandHandle connect(int pid, @Nullable Consumer<String> onData) {
    return sandbox.commands().connect(pid, onData, null);
  }

  /**
   * Types text, as UTF-8, into a terminal, as E2B's {@code pty.sendInput(pid, data)}.
   *
   * @param pid the terminal's process id, positive
   * @param data the text, e.g. {@code "ls\n"}, or {@code "\u0003"} for Ctrl-C
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal (a process without a terminal)
   */
  public void sendInput(int pid, String data) {
    Objects.requireNonNull(data, "data");
    sendInput(pid, data.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Types bytes into a terminal; see {@link #sendInput(int, String)}.
   *
   * @param pid the terminal's process id, positive
   * @param data the bytes
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal
   */
  public void sendInput(int pid, byte[] data) {
    Commands.requirePid(pid);
    Objects.requireNonNull(data, "data");
    ObjectNode req = Commands.selector(pid);
    req.putObject("input").put("pty", Base64.getEncoder().encodeToString(data));
    sandbox.envd().unary("process.Process/SendInput", req, null, "write to the terminal of process " + pid + " in sandbox "
        + sandbox.id());
  }

  /**
   * Resizes a terminal, as E2B's {@code pty.resize(pid, {cols, rows})}; the programs in it are
   * told (SIGWINCH).
   *
   * @param pid the terminal's process id, positive
   * @param cols columns, 1 to 10,000
   * @param rows rows, 1 to 10,000
   * @throws IllegalArgumentException when {@code pid} or the size is out of range
   * @throws SandboxRpcException with code {@code not_found} when no such process runs, or the
   *     daemon's refusal (a process without a terminal); a failed resize is never ignored
   */
  public void resize(int pid, int cols, int rows) {
    Commands.requirePid(pid);
    new io.sandboxes.SpawnOptions.PtySize(cols, rows); // validates the size
    ObjectNode req = Commands.selector(pid);
    req.putObject("pty").putObject("size").put("cols", cols).put("rows", rows);
    sandbox.envd().unary("process.Process/Update", req, null, "resize the terminal of process " + pid + " in sandbox "
        + sandbox.id());
  }

  /**
   * Kills a terminal's process (SIGKILL), as E2B's {@code pty.kill(pid)}.
   *
   * @param pid the terminal's process id, positive
   * @return {@code true} when it was running and was signalled, {@code false} when the sandbox has
   *     no such running process
   * @throws SandboxException when the kill could not be asked for; never {@code false} in its place
   */
  public boolean kill(int pid) {
    return sandbox.commands().kill(pid);
  }

  @Override
  public String toString() {
    return "Pty[" + sandbox.id() + "]";
  }
}
