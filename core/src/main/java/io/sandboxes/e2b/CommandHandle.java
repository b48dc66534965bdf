package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.ProcessMessage;
import io.sandboxes.e2b.internal.StreamCutException;
import io.sandboxes.e2b.internal.Tasks;
import io.sandboxes.e2b.internal.Utf8Accumulator;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A command running in the background, as E2B's {@code CommandHandle}: started by
 * {@link Commands#start} or attached to by {@link Commands#connect(int)}. While connected it
 * collects the command's output (and hands each piece to the listeners given at start or connect);
 * {@link #waitFor()} returns the exit code with that output, as {@code exec} does.
 *
 * <p>{@link #disconnect()} (and {@link #close()}) stops listening without ending the command: it
 * runs on until it exits, is killed, or reaches the deadline it was started with, and
 * {@link Commands#connect(int)} attaches to it again, from this JVM or another. {@link #kill()}
 * ends it.
 *
 * @since 0.1
 */
public final class CommandHandle implements AutoCloseable {
  /** How often a waiting caller looks again at the deadline, the liveness probe and its own limit. */
  private static final Duration SLICE = Duration.ofMillis(200);

  private final LiveSandbox sandbox;
  private final ConnectStream stream;
  private final int pid;
  private final @Nullable String command;
  private final Duration timeout;
  private final @Nullable String user;
  private final @Nullable Consumer<String> onStdout;
  private final @Nullable Consumer<String> onStderr;
  private final long startedNanos = System.nanoTime();
  private final CompletableFuture<JsonNode> end = new CompletableFuture<>();
  private final Object lock = new Object();
  private final Utf8Accumulator outDecoder = new Utf8Accumulator(false);
  private final Utf8Accumulator errDecoder = new Utf8Accumulator(false);
  private final StringBuilder stdout = new StringBuilder();
  private final StringBuilder stderr = new StringBuilder();
  private volatile long lastEventNanos = System.nanoTime();
  private volatile long endNanos;
  private volatile boolean disconnected;
  private volatile @Nullable ExecResult unknown;
  private final Thread reader;

  CommandHandle(LiveSandbox sandbox, ConnectStream stream, int pid, @Nullable String command, Duration timeout,
      @Nullable String user, @Nullable Consumer<String> onStdout, @Nullable Consumer<String> onStderr) {
    this.sandbox = sandbox;
    this.stream = stream;
    this.pid = pid;
    this.command = command;
    this.timeout = timeout;
    this.user = user;
    this.onStdout = onStdout;
    this.onStderr = onStderr;
    this.reader = Tasks.start(sandbox.id(), "sandboxes-command-" + sandbox.id() + "-" + pid, this::read);
  }

  /**
   * Returns the process's id.
   *
   * @return the process id inside the sandbox, for {@link Commands#connect(int)} and the other
   *     calls by pid
   */
  public int pid() {
    return pid;
  }

  /**
   * Returns the standard output received so far (for a PTY, the terminal's output).
   *
   * @return the text, whole characters only; empty when nothing came
   */
  public String stdout() {
    synchronized (lock) {
      return stdout.toString();
    }
  }

  /**
   * Returns the standard error received so far.
   *
   * @return the text, whole characters only; empty when nothing came
   */
  public String stderr() {
    synchronized (lock) {
      return stderr.toString();
    }
  }

  private void read() {
    JsonNode report = null;
    RuntimeException failure = null;
    try {
      ProcessMessage message;
      while ((message = ProcessMessage.next(stream)) != null) {
        JsonNode event = message.event();
        if (event == null || !event.has("keepalive")) {
          lastEventNanos = System.nanoTime();
        }
        if (message.isOutput()) {
          boolean toErr = message.channel() == ProcessMessage.Channel.STDERR;
          String text;
          synchronized (lock) {
            text = (toErr ? errDecoder : outDecoder).feed(message.output());
            (toErr ? stderr : stdout).append(text);
          }
          deliver(toErr ? onStderr : onStdout, text);
        } else if (event.has("end")) {
          report = event.get("end");
          endNanos = System.nanoTime();
        }
      }
      if (report == null) {
        failure = disconnected ? new Disconnected() : new SandboxException("process " + pid + " in sandbox " + sandbox.id()
            + ": the process stream ended without an exit report");
      }
    } catch (Processes.CallbackFailure e) {
      sandbox.commands().killQuietly(pid);
      failure = e;
    } catch (RuntimeException e) {
      failure = disconnected ? new Disconnected() : e;
    } finally {
      stream.close();
    }
    String outTail;
    String errTail;
    synchronized (lock) {
      outTail = outDecoder.finish();
      errTail = errDecoder.finish();
      stdout.append(outTail);
      stderr.append(errTail);
    }
    if (failure == null) {
      try {
        deliver(onStdout, outTail);
        deliver(onStderr, errTail);
      } catch (Processes.CallbackFailure e) {
        failure = e;
      }
    }
    if (failure != null) {
      end.completeExceptionally(failure);
    } else {
      end.complete(report);
    }
  }

  private static void deliver(@Nullable Consumer<String> listener, String text) {
    if (listener == null || text.isEmpty()) {
      return;
    }
    try {
      listener.accept(text);
    } catch (RuntimeException e) {
      throw new Processes.CallbackFailure(e);
    }
  }

  /**
   * Waits for the command to end and returns its exit code with the output received while
   * connected, as {@code exec} returns a foreground command's: a non-zero exit is data
   * ({@link ExecResult#orThrow()} for an exception), a process killed reports -1, and an outcome
   * that could not be observed is {@link LiveSandbox#EXIT_CODE_UNKNOWN} with a line on stderr
   * saying why, never 0. Waits as long as the command runs (bounded by the deadline it was started
   * with); {@link #waitFor(Duration)} bounds the wait. Can be called again: the answer is the same.
   *
   * @return the command's result
   * @throws CommandTimeoutException when a command this handle started outlived its deadline and
   *     the sandbox killed it; it carries the output received before
   * @throws SandboxRpcException with code {@code deadline_exceeded} when the command this handle
   *     attached to was killed at the deadline another client gave it ({@link #stdout()} keeps what
   *     came)
   * @throws io.sandboxes.SandboxNotFoundException when the sandbox ended while the command ran
   * @throws IllegalStateException when this handle was disconnected before the command ended
   * @throws SandboxException when the wait was interrupted (the flag is kept) or the outcome could
   *     not be had; an exception an output listener threw is thrown as it was (the command was
   *     killed)
   */
  public ExecResult waitFor() {
    return waitUntil(null).orElseThrow();
  }

  /**
   * Waits at most {@code limit} for the command to end; see {@link #waitFor()}.
   *
   * @param limit how long to wait at most; zero only looks
   * @return the command's result, or empty when it was still running at the limit (it goes on,
   *     and this handle stays connected)
   * @throws IllegalArgumentException when {@code limit} is negative
   * @throws CommandTimeoutException as {@link #waitFor()} does, and every other failure it has
   */
  public Optional<ExecResult> waitFor(Duration limit) {
    Objects.requireNonNull(limit, "limit");
    if (limit.isNegative()) {
      throw new IllegalArgumentException("limit must not be negative, got " + limit);
    }
    return waitUntil(System.nanoTime() + limit.toNanos());
  }

  private Optional<ExecResult> waitUntil(@Nullable Long deadlineNanos) {
    long waitStart = System.nanoTime();
    boolean probed = false;
    boolean gone = false;
    try {
      while (true) {
        ExecResult known = unknown;
        if (known != null) {
          return Optional.of(known);
        }
        long slice = SLICE.toNanos();
        if (deadlineNanos != null) {
          slice = Math.max(0, Math.min(slice, deadlineNanos - System.nanoTime()));
        }
        JsonNode report = await(slice);
        if (report != null) {
          return Optional.of(result(report));
        }
        long now = System.nanoTime();
        if (command != null && !timeout.isZero()
            && now - startedNanos >= timeout.plus(Processes.DEADLINE_GRACE).toNanos()) {
          // the sandbox should have ended it at its deadline and said so; it did not
          disconnect();
          throw timedOut(new SandboxException("process " + pid + " in sandbox " + sandbox.id() + " was not reported ended "
              + Processes.DEADLINE_GRACE.toSeconds() + " s past its deadline"));
        }
        if (!probed && now - waitStart >= Processes.SETTLE_PROBE.toNanos()) {
          probed = true;
          // as root when the starting user is not known here: another user's kill -0 fails for a live process
          gone = Processes.processGone(sandbox, pid, command != null ? user : "root");
        }
        if (gone && now - lastEventNanos >= Processes.EXIT_REPORT_GRACE.toNanos()) {
          disconnect();
          return Optional.of(unknownOutcome("the process (pid " + pid + ") is gone but its output stream is still held, "
              + "so its real outcome cannot be observed"));
        }
        if (deadlineNanos != null && System.nanoTime() - deadlineNanos >= 0) {
          return Optional.empty();
        }
      }
    } catch (ExecutionException e) {
      throw failure(e.getCause());
    }
  }

  private @Nullable JsonNode await(long nanos) throws ExecutionException {
    try {
      return end.get(nanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while waiting for process " + pid + " in sandbox " + sandbox.id(), e);
    }
  }

  private RuntimeException failure(Throwable cause) {
    if (cause instanceof Processes.CallbackFailure listener) {
      return listener.getCause();
    }
    if (cause instanceof Disconnected) {
      return new IllegalStateException("this handle of process " + pid + " was disconnected before the process ended;"
          + " commands().connect(" + pid + ") attaches to it again");
    }
    if (cause instanceof SandboxRpcException rpc && "deadline_exceeded".equals(rpc.code()) && command != null) {
      return timedOut(rpc);
    }
    if (cause instanceof StreamCutException cut) {
      if (command != null && !timeout.isZero() && System.nanoTime() - startedNanos >= timeout.toNanos()
          && !Thread.currentThread().isInterrupted()) {
        return timedOut(cut); // as exec reads a stream that broke off once the deadline had passed
      }
      return Processes.explainCut(sandbox, cut, "the command");
    }
    if (cause instanceof RuntimeException re) {
      return re;
    }
    return new SandboxException(String.valueOf(cause.getMessage()), cause);
  }

  private CommandTimeoutException timedOut(Throwable cause) {
    return new CommandTimeoutException(Objects.requireNonNull(command), timeout, stdout(), stderr(), cause);
  }

  private ExecResult result(JsonNode report) {
    Integer code = Processes.readExitCode(report);
    if (code == null) {
      return unknownOutcome("the daemon's exit report carries exitCode " + Json.abbreviate(report.get("exitCode"))
          + ", which is not an exit code");
    }
    return new ExecResult(code, stdout(), stderr(), Duration.ofNanos(endNanos - startedNanos), Json.text(report, "error"));
  }

  private ExecResult unknownOutcome(String why) {
    String note = "e2b: exit code unknown — " + why + "; reporting failure";
    String err = stderr();
    ExecResult r = new ExecResult(LiveSandbox.EXIT_CODE_UNKNOWN, stdout(), err.isEmpty() ? note : err + "\n" + note,
        Duration.ofNanos(System.nanoTime() - startedNanos));
    unknown = r;
    return r;
  }

  /**
   * Writes text, as UTF-8, to the command's standard input; see
   * {@link Commands#sendStdin(int, String)}.
   *
   * @param data the text to write
   */
  public void sendStdin(String data) {
    sandbox.commands().sendStdin(pid, data);
  }

  /**
   * Writes bytes to the command's standard input; see {@link Commands#sendStdin(int, byte[])}.
   *
   * @param data the bytes to write
   */
  public void sendStdin(byte[] data) {
    sandbox.commands().sendStdin(pid, data);
  }

  /** Closes the command's standard input; see {@link Commands#closeStdin(int)}. */
  public void closeStdin() {
    sandbox.commands().closeStdin(pid);
  }

  /**
   * Kills the command (SIGKILL); see {@link Commands#kill(int)}. {@link #waitFor()} then reports
   * exit code -1.
   *
   * @return {@code true} when it was running, {@code false} when it had already ended
   */
  public boolean kill() {
    return sandbox.commands().kill(pid);
  }

  /**
   * Stops listening, leaving the command running, as E2B's {@code disconnect()}: no more output
   * reaches this handle or its listeners, and {@link #waitFor()} says the handle was disconnected,
   * unless the command had already ended. {@link Commands#connect(int)} attaches again.
   * Idempotent; returns once this handle's reader has stopped.
   */
  public void disconnect() {
    disconnected = true;
    stream.close();
    if (Thread.currentThread() != reader) {
      io.sandboxes.e2b.internal.Tasks.joinUninterruptibly(reader);
    }
  }

  /** Same as {@link #disconnect()}: the command keeps running. Use {@link #kill()} to end it. */
  @Override
  public void close() {
    disconnect();
  }

  @Override
  public String toString() {
    return "CommandHandle[" + sandbox.id() + ", pid " + pid + "]";
  }

  /** The reader stopped because the handle was disconnected. */
  private static final class Disconnected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Disconnected() {
      super("disconnected", null, false, false);
    }
  }
}
