package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.EnvdCalls.keepalive;
import static io.sandboxes.local.internal.http.EnvdCalls.reply;
import static io.sandboxes.local.internal.http.EnvdCalls.requirePath;
import static io.sandboxes.local.internal.http.EnvdCalls.streamError;
import static io.sandboxes.local.internal.http.EnvdCalls.streamRequest;
import static io.sandboxes.local.internal.http.EnvdCalls.timeoutHeader;
import static io.sandboxes.local.internal.http.EnvdCalls.unaryRequest;
import static io.sandboxes.local.internal.http.EnvdCalls.user;
import static io.sandboxes.local.internal.http.EnvdCalls.writeMessage;

import static io.sandboxes.local.internal.http.RequestBody.bind;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.local.internal.DirWatch;
import io.sandboxes.local.internal.FileEntry;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.http.RequestBody.Refusal;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * envd's {@code filesystem.Filesystem} calls: stat, list, make, move and remove, and watching a
 * folder, streamed ({@code WatchDir}) or polled (a watcher's events).
 */
final class FilesystemRpcs {
  private FilesystemRpcs() {}

  /** {@code CreateWatcher}'s answer. */
  record Watcher(String watcherId) {}

  /** Stat, ListDir, MakeDir and Remove: the path, any value read as its text. */
  record PathBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String path) {}

  /** ListDir: the path, and how many levels down (a whole number, as Connect's JSON writes one; below 1 is 1). */
  record ListDirBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String path,
      @Refusal("'depth' must be a whole number") @JsonDeserialize(using = ProcessBodies.WholeNumber.class) @Nullable Integer depth) {}

  /** Move: where from and where to. */
  record MoveBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String source,
      @JsonDeserialize(using = Lenient.Text.class) @Nullable String destination) {}

  /** WatchDir and CreateWatcher: the folder, whether its subfolders count, and (WatchDir) whether events carry the entry. */
  record WatchBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String path, Lenient.@Nullable Flag recursive,
      Lenient.@Nullable Flag includeEntry) {}

  /** GetWatcherEvents and RemoveWatcher: which watcher. */
  record WatcherBody(@JsonDeserialize(using = Lenient.Text.class) @Nullable String watcherId) {}

  /** {@code GetWatcherEvents}'s answer. */
  record Events(List<Event> events) {}

  /** One change in a watched folder. */
  record Event(String name, String type) {}

  /** Stat's, MakeDir's and Move's answer: the entry. */
  record EntryAnswer(FileEntry entry) {}

  /** ListDir's answer: the entries. */
  record Entries(List<FileEntry> entries) {}

  /** Remove's and RemoveWatcher's answer. */
  private static final EnvdCalls.Nothing DONE = EnvdCalls.Nothing.NOTHING;

  /** A message of WatchDir's stream: its start, one change, or a keepalive. */
  record WatchMessage(EnvdCalls.@Nullable Nothing start, @Nullable Change filesystem, EnvdCalls.@Nullable Nothing keepalive) {
    static final WatchMessage START = new WatchMessage(EnvdCalls.Nothing.NOTHING, null, null);
    static final WatchMessage KEEPALIVE = new WatchMessage(null, null, EnvdCalls.Nothing.NOTHING);
  }

  /** One change streamed by WatchDir, with the entry as it is now when asked for (and still there). */
  record Change(String name, String type, @Nullable FileEntry entry) {}

  static void routes(Map<String, EnvdCalls.Call> t) {
    t.put("/filesystem.Filesystem/Stat", (ex, sandbox) -> {
      PathBody req = bind(unaryRequest(ex), PathBody.class);
      reply(ex, new EntryAnswer(sandbox.files().stat(user(ex), requirePath(req.path(), "path"))));
    });
    t.put("/filesystem.Filesystem/ListDir", (ex, sandbox) -> {
      ListDirBody req = bind(unaryRequest(ex), ListDirBody.class);
      int depth = req.depth() == null ? 1 : req.depth();
      reply(ex, new Entries(sandbox.files().list(user(ex), requirePath(req.path(), "path"), Math.max(depth, 1))));
    });
    t.put("/filesystem.Filesystem/MakeDir", (ex, sandbox) -> {
      PathBody req = bind(unaryRequest(ex), PathBody.class);
      reply(ex, new EntryAnswer(sandbox.files().makeDir(user(ex), requirePath(req.path(), "path"))));
    });
    t.put("/filesystem.Filesystem/Move", (ex, sandbox) -> {
      MoveBody req = bind(unaryRequest(ex), MoveBody.class);
      reply(ex, new EntryAnswer(sandbox.files().move(user(ex), requirePath(req.source(), "source"), requirePath(req.destination(), "destination"))));
    });
    t.put("/filesystem.Filesystem/Remove", (ex, sandbox) -> {
      PathBody req = bind(unaryRequest(ex), PathBody.class);
      sandbox.files().remove(user(ex), requirePath(req.path(), "path"));
      reply(ex, DONE);
    });
    t.put("/filesystem.Filesystem/WatchDir", FilesystemRpcs::watchDir);
    t.put("/filesystem.Filesystem/CreateWatcher", (ex, sandbox) -> {
      WatchBody req = bind(unaryRequest(ex), WatchBody.class);
      String dir = watchableDir(sandbox, user(ex), req);
      String watcherId = sandbox.addWatcher(user(ex), dir, Lenient.Flag.or(req.recursive(), false));
      reply(ex, new Watcher(watcherId));
    });
    t.put("/filesystem.Filesystem/GetWatcherEvents", (ex, sandbox) -> {
      String watcherId = bind(unaryRequest(ex), WatcherBody.class).watcherId();
      DirWatch w = watcherId == null ? null : sandbox.watcher(watcherId);
      if (w == null) {
        throw new RpcError("not_found", "watcher " + watcherId + " not found");
      }
      reply(ex, new Events(w.drain().stream().map(c -> new Event(c.name(), c.type())).toList()));
    });
    t.put("/filesystem.Filesystem/RemoveWatcher", (ex, sandbox) -> {
      String watcherId = bind(unaryRequest(ex), WatcherBody.class).watcherId();
      if (watcherId == null || !sandbox.removeWatcher(watcherId)) {
        throw new RpcError("not_found", "watcher " + watcherId + " not found");
      }
      reply(ex, DONE);
    });
  }

  /** Checks the watch request and returns the folder's absolute path. */
  private static String watchableDir(LocalSandbox sandbox, String user, WatchBody req) throws RpcError {
    String path = requirePath(req.path(), "path");
    FileEntry entry = sandbox.files().stat(user, path);
    if (!FileEntry.DIRECTORY.equals(entry.type())) {
      throw new RpcError("invalid_argument", "path '" + path + "' is not a directory");
    }
    return entry.path();
  }

  private static void watchDir(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    WatchBody req = bind(streamRequest(ex), WatchBody.class);
    String user = user(ex);
    Duration timeout = timeoutHeader(ex);
    Duration keepalive = keepalive(ex);
    boolean includeEntry = Lenient.Flag.or(req.includeEntry(), false);
    DirWatch watch;
    try {
      watch = sandbox.watch(user, watchableDir(sandbox, user, req), Lenient.Flag.or(req.recursive(), false));
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    long deadline = timeout.isZero() ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    OutputStream out = ex.stream(200, Connect.STREAM_CONTENT_TYPE);
    try (watch) {
      writeMessage(out, WatchMessage.START);
      long lastSent = System.nanoTime();
      while (true) {
        long now = System.nanoTime();
        if (now >= deadline) {
          EnvdCalls.endStream(ex, new EnvdCalls.ErrorEnd("deadline_exceeded", "the watch reached its deadline"));
          return;
        }
        if (watch.sandboxEnded()) {
          ex.abort(new IOException("the sandbox ended")); // breaks off, as E2B's stream does when its sandbox goes
          return;
        }
        if (watch.ended()) {
          EnvdCalls.endStream(ex, new EnvdCalls.ErrorEnd("not_found", "the watched folder " + watch.root() + " went away"));
          return;
        }
        long wait = Math.min(Math.min(deadline - now, keepalive.toNanos()), Duration.ofMillis(500).toNanos());
        DirWatch.Change c = watch.next(wait, TimeUnit.NANOSECONDS);
        if (c != null) {
          FileEntry entry = null;
          if (includeEntry && !c.type().equals("EVENT_TYPE_REMOVE") && !c.type().equals("EVENT_TYPE_RENAME")) {
            try {
              entry = sandbox.files().stat(user, watch.root() + "/" + c.name());
            } catch (RpcError gone) {
              // the file went away before it could be read: the event stands without its entry
            }
          }
          writeMessage(out, new WatchMessage(null, new Change(c.name(), c.type(), entry), null));
          lastSent = System.nanoTime();
        } else if (System.nanoTime() - lastSent >= keepalive.toNanos()) {
          writeMessage(out, WatchMessage.KEEPALIVE);
          lastSent = System.nanoTime();
        }
      }
    } catch (IOException e) {
      ex.abort(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.abort(e);
    }
  }
}
