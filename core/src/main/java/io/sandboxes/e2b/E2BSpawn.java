package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.ProcessExit;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.SpawnHandle;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Tasks;
import io.sandboxes.e2b.internal.ProcessMessage;
import io.sandboxes.e2b.internal.Utf8Accumulator;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** A spawned E2B process: one Start stream read on its own thread, input and signals as unary calls. */
final class E2BSpawn implements SpawnHandle {
  private final Envd envd;
  private final ConnectStream stream;
  private final int pid;
  private final boolean pty;
  private final Listeners stdout = new Listeners();
  private final Listeners stderr = new Listeners();
  private final List<Consumer<ProcessExit>> closeListeners = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile @Nullable ProcessExit exit;
  private final Thread reader;

  E2BSpawn(String sandboxId, Envd envd, ConnectStream stream, int pid, boolean pty) {
    this.envd = envd;
    this.stream = stream;
    this.pid = pid;
    this.pty = pty;
    this.reader = Tasks.start(sandboxId, "sandboxes-spawn-" + sandboxId + "-" + pid, this::read);
  }

  private void read() {
    // a spawn's output goes to its listeners as it comes: nothing of it is kept here
    Utf8Accumulator out = new Utf8Accumulator(false);
    Utf8Accumulator err = new Utf8Accumulator(false);
    ProcessExit result = null;
    try {
      ProcessMessage message;
      while ((message = ProcessMessage.next(stream)) != null) {
        JsonNode event = message.event();
        if (message.isOutput()) {
          if (message.channel() == ProcessMessage.Channel.STDERR) {
            emit(stderr, err.feed(message.output()));
          } else {
            emit(stdout, out.feed(message.output()));
          }
        } else if (event.has("end")) {
          JsonNode end = event.get("end");
          Integer code = Processes.readExitCode(end);
          result = code != null ? new ProcessExit(code, Json.text(end, "error"))
              : new ProcessExit(-1, "exit code unknown: the daemon's exit report carries exitCode "
                  + Json.abbreviate(end.get("exitCode")) + ", which is not an exit code");
        }
      }
      if (result == null) {
        result = new ProcessExit(-1, "the process stream ended without an exit report");
      }
    } catch (RuntimeException e) {
      result = new ProcessExit(-1, e.getMessage());
    } finally {
      emit(stdout, out.finish());
      emit(stderr, err.finish());
      fireClose(result == null ? new ProcessExit(-1, "the process stream broke") : result);
    }
  }

  private static void emit(Listeners listeners, String text) {
    if (!text.isEmpty()) {
      listeners.emit(text);
    }
  }

  /**
   * One stream's listeners. Output that arrives before the first listener is registered is kept
   * and handed to that listener, so nothing is lost between {@code spawn} returning and the
   * caller subscribing; later listeners get output from then on.
   */
  private static final class Listeners {
    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
    private StringBuilder pending = new StringBuilder();

    synchronized void emit(String text) {
      if (listeners.isEmpty()) {
        pending.append(text);
        return;
      }
      for (Consumer<String> l : listeners) {
        l.accept(text);
      }
    }

    synchronized void add(Consumer<String> listener) {
      listeners.add(listener);
      if (pending.length() > 0) {
        String early = pending.toString();
        pending = new StringBuilder();
        listener.accept(early);
      }
    }
  }

  private void fireClose(ProcessExit result) {
    synchronized (closeListeners) {
      if (exit != null) {
        return;
      }
      exit = result;
    }
    for (Consumer<ProcessExit> l : closeListeners) {
      l.accept(result);
    }
  }

  @Override
  public int pid() {
    return pid;
  }

  @Override
  public void onStdout(Consumer<String> listener) {
    stdout.add(listener);
  }


  @Override
  public void onStderr(Consumer<String> listener) {
    stderr.add(listener);
  }

  @Override
  public void onClose(Consumer<ProcessExit> listener) {
    ProcessExit done;
    synchronized (closeListeners) {
      done = exit;
      if (done == null) {
        closeListeners.add(listener);
        return;
      }
    }
    listener.accept(done);
  }

  private ObjectNode selector() {
    ObjectNode req = Json.object();
    req.putObject("process").put("pid", pid);
    return req;
  }

  @Override
  public void write(String data) {
    if (exit != null) {
      return;
    }
    ObjectNode req = selector();
    req.putObject("input").put(pty ? "pty" : "stdin", Base64.getEncoder().encodeToString(data.getBytes(StandardCharsets.UTF_8)));
    try {
      envd.unary("process.Process/SendInput", req, null, "write to process " + pid);
    } catch (RuntimeException e) {
      if (exit == null && !isGone(e)) {
        throw e;
      }
    }
  }

  @Override
  public void closeStdin() {
    if (pty) {
      throw new UnsupportedOperationException("a PTY has no stdin to close; write \"\\u0004\" (Ctrl-D) instead");
    }
    if (exit != null) {
      return;
    }
    try {
      envd.unary("process.Process/CloseStdin", selector(), null, "close stdin of process " + pid);
    } catch (RuntimeException e) {
      if (exit == null && !isGone(e)) {
        throw e;
      }
    }
  }

  @Override
  public void kill() {
    if (exit != null) {
      return;
    }
    ObjectNode req = selector().put("signal", "SIGNAL_SIGKILL");
    try {
      envd.unary("process.Process/SendSignal", req, null, "kill process " + pid);
    } catch (RuntimeException e) {
      if (exit == null && !isGone(e)) {
        throw e;
      }
    }
  }

  private static boolean isGone(RuntimeException e) {
    return e instanceof SandboxRpcException rpc && "not_found".equals(rpc.code());
  }

  @Override
  public Optional<Terminal> terminal() {
    if (!pty) {
      return Optional.empty();
    }
    return Optional.of((cols, rows) -> {
      ObjectNode req = selector();
      req.putObject("pty").putObject("size").put("cols", cols).put("rows", rows);
      try {
        envd.unary("process.Process/Update", req, null, "resize terminal of process " + pid);
      } catch (RuntimeException ignored) {
        // the process may have raced to exit; a resize is never worth tearing the session down
      }
    });
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      kill();
    } catch (RuntimeException ignored) {
      // closing is best effort; the process's own deadline ends it otherwise
    }
    stream.close();
    try {
      reader.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
