package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.Subscription;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.StreamCutException;
import io.sandboxes.e2b.internal.Tasks;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A running watch of a folder, as E2B's {@code WatchHandle}: {@link #stop()} ends it. It also ends
 * at its deadline, when the folder or the sandbox goes, or when its listener throws; the exit
 * listener ({@link WatchOptions#withOnExit}) hears which. Its one thread ends with it.
 *
 * @since 0.1
 */
public final class WatchHandle implements Subscription {
  private final ConnectStream stream;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile @Nullable Thread reader;
  private volatile boolean ended;

  private WatchHandle(ConnectStream stream) {
    this.stream = stream;
  }

  /** Opens the watch and returns once the daemon confirmed it. */
  static WatchHandle open(LiveSandbox sandbox, String path, Consumer<FilesystemEvent> onEvent, WatchOptions options) {
    ObjectNode req = Json.object().put("path", path).put("recursive", options.recursive())
        .put("includeEntry", options.includeEntry()).put("allowNetworkMounts", options.allowNetworkMounts());
    String context = "watch " + path + " in sandbox " + sandbox.id();
    ConnectStream stream = sandbox.envd().stream("filesystem.Filesystem/WatchDir", req, options.user(), options.timeout(), context, path);
    try {
      JsonNode first = stream.next();
      if (first == null || !first.has("start")) {
        throw new SandboxException(context + ": the daemon did not confirm the watch");
      }
    } catch (RuntimeException e) {
      stream.close();
      throw e;
    }
    return WatchHandle.start(sandbox, stream, onEvent, options.onExit());
  }

  private static WatchHandle start(LiveSandbox sandbox, ConnectStream stream, Consumer<FilesystemEvent> onEvent,
      @Nullable Consumer<@Nullable Throwable> onExit) {
    WatchHandle h = new WatchHandle(stream);
    Thread t = Tasks.start(sandbox.id(), "sandboxes-watch-" + sandbox.id(), () -> h.run(sandbox, onEvent, onExit));
    if (h.reader == null) {
      h.reader = t;
    }
    return h;
  }

  private void run(LiveSandbox sandbox, Consumer<FilesystemEvent> onEvent, @Nullable Consumer<@Nullable Throwable> onExit) {
    reader = Thread.currentThread();
    Throwable failure = null;
    try {
      JsonNode message;
      while ((message = stream.next()) != null) {
        FilesystemEvent event = FilesystemEvent.of(message);
        if (event != null) {
          try {
            onEvent.accept(event);
          } catch (RuntimeException | Error listener) {
            failure = listener;
            break;
          }
        }
      }
    } catch (StreamCutException cut) {
      failure = stopped.get() ? null : Processes.explainCut(sandbox, cut, "the watch");
    } catch (RuntimeException e) {
      failure = stopped.get() ? null : e;
    } finally {
      stream.close();
      ended = true;
    }
    if (onExit != null) {
      try {
        onExit.accept(failure);
      } catch (RuntimeException ignored) {
        // the last word of the watch has nowhere to go
      }
    }
  }

  /**
   * Stops the watch and waits for its thread to end (at once, unless a listener is still running;
   * called from a listener, it does not wait for itself). Idempotent.
   */
  public void stop() {
    stopped.set(true);
    stream.close();
    Thread t = reader;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Whether the watch still runs.
   *
   * @return false once it was stopped or ended on its own
   */
  public boolean isRunning() {
    return !ended && !stopped.get();
  }
}
