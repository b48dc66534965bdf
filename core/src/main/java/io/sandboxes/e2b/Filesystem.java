package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.EnvdFiles;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The file system of one sandbox, as E2B's {@code sandbox.files} ({@code Filesystem}): read and
 * write files whole or as streams, several files in one call, list folders to a depth, make
 * folders, rename, remove, ask whether a path exists and what it is, and watch a folder.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=files :
 * Filesystem files = sandbox.files();
 * files.write("/home/user/data/in.csv", "a,b\n1,2\n");
 * try (InputStream big = Files.newInputStream(Path.of("model.bin"))) {
 *   files.write("/home/user/model.bin", big);              // streamed, never held whole
 * }
 * for (EntryInfo e : files.list("/home/user", 2)) {
 *   System.out.println(e.path() + " " + e.type() + " " + e.size() + " " + e.permissions());
 * }
 * try (InputStream in = files.readStream("/home/user/model.bin")) {
 *   in.transferTo(OutputStream.nullOutputStream());
 * }
 * }
 *
 * <p>Every call may run as another user of the sandbox ({@link FileOptions#withUser}); relative
 * paths resolve against that user's home. A path that is not there is a
 * {@link SandboxFileNotFoundException}; a refusal for want of permission an
 * {@link io.sandboxes.SandboxFilePermissionException}; a write that does not fit an
 * {@link io.sandboxes.SandboxNotEnoughSpaceException}; a sandbox that is gone an
 * {@link io.sandboxes.SandboxNotFoundException}. Only a real "not found" answer is ever read as
 * "not there" ({@link #exists} answers false for nothing else).
 *
 * <p>Obtained from {@link LiveSandbox#files()}; cheap, holds nothing, and follows the sandbox
 * handle across a resume.
 *
 * @since 0.1
 */
public final class Filesystem {
  private final LiveSandbox sandbox;

  Filesystem(LiveSandbox sandbox) {
    this.sandbox = sandbox;
  }

  // ---- reading ----

  /**
   * Reads a file as UTF-8 text, as E2B's {@code files.read(path)}.
   *
   * @param path absolute, or relative to the user's home
   * @return the content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public String read(String path) {
    return read(path, FileOptions.defaults());
  }

  /**
   * Reads a file as UTF-8 text.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user, request timeout and compression
   * @return the content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public String read(String path, FileOptions options) {
    return new String(readBytes(path, options), StandardCharsets.UTF_8);
  }

  /**
   * Reads a file's bytes, as E2B's {@code files.read(path, {format: 'bytes'})}.
   *
   * @param path absolute, or relative to the user's home
   * @return the content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public byte[] readBytes(String path) {
    return readBytes(path, FileOptions.defaults());
  }

  /**
   * Reads a file's bytes.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user, request timeout and compression
   * @return the content
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public byte[] readBytes(String path, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    return transfer().read(path, options.user(), options.gzip(), options.requestTimeout());
  }

  /**
   * Opens a file for reading as it arrives, as E2B's {@code files.read(path, {format: 'stream'})};
   * see {@link #readStream(String, FileOptions)}.
   *
   * @param path absolute, or relative to the user's home
   * @return the content as a stream; close it
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public InputStream readStream(String path) {
    return readStream(path, FileOptions.defaults());
  }

  /**
   * Opens a file for reading as it arrives: the stream holds one buffer at a time, never the
   * whole file. Errors (no such file, no permission) are thrown from here, before any byte; a
   * transfer that breaks off later fails the read that meets it, never a short file that looks
   * whole. While the caller reads, each wait for bytes is bounded by the stream idle timeout
   * (by default the request timeout). Closing the stream releases its connection; read it to its
   * end or close it.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user, request timeout, idle timeout and compression
   * @return the content as a stream
   * @throws SandboxFileNotFoundException when there is no such file
   */
  public InputStream readStream(String path, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    Duration idle = options.streamIdleTimeout();
    if (idle == null) {
      idle = options.requestTimeout() != null ? options.requestTimeout() : transfer().defaultTimeout();
    }
    return transfer().readStream(path, options.user(), options.gzip(), options.requestTimeout(), idle);
  }

  // ---- writing ----

  /**
   * Writes UTF-8 text to a file, as E2B's {@code files.write(path, string)}: a file that is not
   * there is created with its missing folders; one that is there is replaced.
   *
   * @param path absolute, or relative to the user's home
   * @param text the content
   * @return what was written
   */
  public WriteInfo write(String path, String text) {
    return write(path, text, FileOptions.defaults());
  }

  /**
   * Writes UTF-8 text to a file; see {@link #write(String, String)}.
   *
   * @param path absolute, or relative to the user's home
   * @param text the content
   * @param options the user, request timeout, compression and metadata
   * @return what was written
   */
  public WriteInfo write(String path, String text, FileOptions options) {
    Objects.requireNonNull(text, "text");
    return write(path, text.getBytes(StandardCharsets.UTF_8), options);
  }

  /**
   * Writes bytes to a file, as E2B's {@code files.write(path, data)}.
   *
   * @param path absolute, or relative to the user's home
   * @param data the content
   * @return what was written
   */
  public WriteInfo write(String path, byte[] data) {
    return write(path, data, FileOptions.defaults());
  }

  /**
   * Writes bytes to a file.
   *
   * @param path absolute, or relative to the user's home
   * @param data the content
   * @param options the user, request timeout, compression and metadata
   * @return what was written
   * @throws io.sandboxes.SandboxNotEnoughSpaceException when the sandbox's disk is full
   */
  public WriteInfo write(String path, byte[] data, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(data, "data");
    Objects.requireNonNull(options, "options");
    return only(path, putBytes(path, data, options));
  }

  /**
   * Writes a file from a stream, as E2B's {@code files.write(path, ReadableStream)}; see
   * {@link #write(String, InputStream, FileOptions)}.
   *
   * @param path absolute, or relative to the user's home
   * @param source the content, read to its end and closed
   * @return what was written
   */
  public WriteInfo write(String path, InputStream source) {
    return write(path, source, FileOptions.defaults());
  }

  /**
   * Writes a file from a stream, sent as it is read: the client holds one piece at a time, never
   * the whole file. The daemon writes beside the target and puts the file in place only once all
   * of it arrived, so a transfer that breaks off leaves the target as it was. The source is closed
   * when the write ends, whatever the outcome. Without a request timeout in {@code options} the
   * write is not timed, as E2B's streamed uploads are not (a slow source is the caller's own).
   *
   * @param path absolute, or relative to the user's home
   * @param source the content, read to its end and closed
   * @param options the user, request timeout, compression and metadata
   * @return what was written
   */
  public WriteInfo write(String path, InputStream source, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(options, "options");
    try {
      InputStream body = options.gzip() ? EnvdFiles.gzipping(source) : source;
      JsonNode answer = transfer().write(path, HttpRequest.BodyPublishers.ofInputStream(() -> body), options.gzip(), options.user(),
          options.metadata(), streamTimeout(options));
      return only(path, answer);
    } finally {
      closeQuietly(source);
    }
  }

  /**
   * Writes several files, as E2B's {@code files.write([...])}; see
   * {@link #write(List, FileOptions)}.
   *
   * @param files the files, each with its path
   * @return what was written, one per file
   */
  public List<WriteInfo> write(List<WriteEntry> files) {
    return write(files, FileOptions.defaults());
  }

  /**
   * Writes several files. They go in one multipart request, each file sent as it is read, as
   * E2B's SDKs send them; with gzip, or when a path cannot name a part as it is (a quote, a
   * backslash, a character outside printable ASCII), one request per file instead. The metadata
   * goes on every file. Streams in the entries are closed when the write ends.
   *
   * @param files the files, each with its path; empty writes nothing
   * @param options the user, request timeout, compression and metadata
   * @return what was written, one per file, as the daemon answered
   */
  public List<WriteInfo> write(List<WriteEntry> files, FileOptions options) {
    Objects.requireNonNull(files, "files");
    Objects.requireNonNull(options, "options");
    List<WriteEntry> entries = List.copyOf(files); // refuses null entries
    for (WriteEntry e : entries) {
      checkPath(e.path(), "a file's path");
    }
    if (entries.isEmpty()) {
      return List.of();
    }
    try {
      List<WriteInfo> out = new ArrayList<>();
      if (options.gzip() || !entries.stream().allMatch(e -> EnvdFiles.fitsMultipart(e.path()))) {
        for (WriteEntry e : entries) {
          byte[] bytes = e.bytes();
          out.add(bytes != null ? write(e.path(), bytes, options) : write(e.path(), Objects.requireNonNull(e.stream()), options));
        }
        return List.copyOf(out);
      }
      boolean streamed = entries.stream().anyMatch(e -> e.stream() != null);
      List<EnvdFiles.Part> parts = new ArrayList<>();
      for (WriteEntry e : entries) {
        byte[] bytes = e.bytes();
        InputStream s = e.stream();
        parts.add(new EnvdFiles.Part(e.path(), () -> bytes != null ? HttpRequest.BodyPublishers.ofByteArray(bytes)
            : HttpRequest.BodyPublishers.ofInputStream(() -> s)));
      }
      JsonNode answer = transfer().writeAll(parts, options.user(), options.metadata(),
          streamed ? streamTimeout(options) : options.requestTimeout());
      if (answer == null) {
        throw new SandboxException("write " + entries.size() + " files in sandbox " + sandbox.id()
            + ": the daemon answered without saying what it wrote");
      }
      return infos(entries.get(0).path(), answer);
    } finally {
      for (WriteEntry e : entries) {
        InputStream s = e.stream();
        if (s != null) {
          closeQuietly(s);
        }
      }
    }
  }

  /**
   * Writes several files; the same as {@link #write(List, FileOptions)}, under E2B's other name.
   *
   * @param files the files, each with its path
   * @param options the user, request timeout, compression and metadata
   * @return what was written, one per file
   */
  public List<WriteInfo> writeFiles(List<WriteEntry> files, FileOptions options) {
    return write(files, options);
  }

  /** Writes bytes; the daemon's answer, or null when it said nothing (200 without a body). */
  @Nullable JsonNode putBytes(String path, byte[] data, FileOptions options) {
    byte[] body = options.gzip() ? EnvdFiles.gzip(data) : data;
    return transfer().write(path, HttpRequest.BodyPublishers.ofByteArray(body), options.gzip(), options.user(), options.metadata(),
        options.requestTimeout());
  }

  private WriteInfo only(String path, @Nullable JsonNode answer) {
    List<WriteInfo> all = infos(path, answer);
    return all.get(0);
  }

  private List<WriteInfo> infos(String path, @Nullable JsonNode answer) {
    if (answer == null || !answer.isArray() || answer.isEmpty()) {
      throw new SandboxException("write " + path + " in sandbox " + sandbox.id() + ": the daemon answered without saying what it wrote");
    }
    List<WriteInfo> out = new ArrayList<>();
    answer.forEach(n -> out.add(WriteInfo.of(n)));
    return List.copyOf(out);
  }

  /** A streamed transfer is timed only when the caller asked for it. */
  private static Duration streamTimeout(FileOptions options) {
    return options.requestTimeout() != null ? options.requestTimeout() : Duration.ZERO;
  }

  // ---- the file system RPCs ----

  /**
   * Lists a folder's direct entries, as E2B's {@code files.list(path)}.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @return its entries
   * @throws SandboxFileNotFoundException when there is no such folder
   */
  public List<EntryInfo> list(String path) {
    return list(path, 1, FileOptions.defaults());
  }

  /**
   * Lists a folder to a depth, as E2B's {@code files.list(path, {depth})}.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @param depth 1 for its direct entries, 2 for theirs too, and so on
   * @return its entries down to that depth, the folder itself left out
   * @throws IllegalArgumentException when {@code depth} is less than 1
   * @throws SandboxFileNotFoundException when there is no such folder
   */
  public List<EntryInfo> list(String path, int depth) {
    return list(path, depth, FileOptions.defaults());
  }

  /**
   * Lists a folder to a depth. Unlike E2B's JS SDK, entries whose type the daemon did not give
   * (a link to nothing, a socket) are kept, as {@link FileType#UNKNOWN}.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @param depth 1 for its direct entries, 2 for theirs too, and so on
   * @param options the user and request timeout
   * @return its entries down to that depth, the folder itself left out
   * @throws IllegalArgumentException when {@code depth} is less than 1
   * @throws SandboxFileNotFoundException when there is no such folder
   */
  public List<EntryInfo> list(String path, int depth, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    if (depth < 1) {
      throw new IllegalArgumentException("depth must be at least 1, got " + depth);
    }
    JsonNode answer = rpc("ListDir", Json.object().put("path", path).put("depth", depth), "list " + path, path, options);
    List<EntryInfo> out = new ArrayList<>();
    for (JsonNode e : answer.path("entries")) {
      out.add(EntryInfo.of(e));
    }
    return List.copyOf(out);
  }

  /**
   * Makes a folder and any missing folders above it, as E2B's {@code files.makeDir}.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @return true when it was made, false when it was already there
   */
  public boolean makeDir(String path) {
    return makeDir(path, FileOptions.defaults());
  }

  /**
   * Makes a folder and any missing folders above it.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @param options the user and request timeout
   * @return true when it was made, false when it was already there
   * @throws SandboxRpcException ({@code invalid_argument}) when a file is in the way
   */
  public boolean makeDir(String path, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    try {
      rpc("MakeDir", Json.object().put("path", path), "make folder " + path, path, options);
      return true;
    } catch (SandboxRpcException e) {
      if ("already_exists".equals(e.code())) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Renames or moves a file or folder, as E2B's {@code files.rename}.
   *
   * @param oldPath what to move
   * @param newPath where it goes; missing folders above it are made
   * @return what the daemon says of it at its new path
   * @throws SandboxFileNotFoundException when there is nothing at {@code oldPath}
   */
  public EntryInfo rename(String oldPath, String newPath) {
    return rename(oldPath, newPath, FileOptions.defaults());
  }

  /**
   * Renames or moves a file or folder.
   *
   * @param oldPath what to move
   * @param newPath where it goes; missing folders above it are made
   * @param options the user and request timeout
   * @return what the daemon says of it at its new path
   * @throws SandboxFileNotFoundException when there is nothing at {@code oldPath}
   */
  public EntryInfo rename(String oldPath, String newPath, FileOptions options) {
    checkPath(oldPath, "oldPath");
    checkPath(newPath, "newPath");
    Objects.requireNonNull(options, "options");
    JsonNode answer = rpc("Move", Json.object().put("source", oldPath).put("destination", newPath),
        "rename " + oldPath + " to " + newPath, oldPath, options);
    return entryOf(answer, "rename " + oldPath);
  }

  /**
   * Removes a file, or a folder with everything in it, as E2B's {@code files.remove}. Removing what
   * is not there succeeds, as with E2B.
   *
   * @param path absolute, or relative to the user's home
   */
  public void remove(String path) {
    remove(path, FileOptions.defaults());
  }

  /**
   * Removes a file, or a folder with everything in it; removing what is not there succeeds.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user and request timeout
   */
  public void remove(String path, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    rpc("Remove", Json.object().put("path", path), "remove " + path, path, options);
  }

  /**
   * Whether a path is there, as E2B's {@code files.exists}.
   *
   * @param path absolute, or relative to the user's home
   * @return true when it is, false only when the daemon answered that it is not
   */
  public boolean exists(String path) {
    return exists(path, FileOptions.defaults());
  }

  /**
   * Whether a path is there. Only the daemon's own "not found" is false: a call that could not be
   * made, or any other refusal, throws.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user and request timeout
   * @return true when it is, false only when the daemon answered that it is not
   */
  public boolean exists(String path, FileOptions options) {
    try {
      getInfo(path, options);
      return true;
    } catch (SandboxFileNotFoundException e) {
      return false;
    }
  }

  /**
   * What a path is, as E2B's {@code files.getInfo}.
   *
   * @param path absolute, or relative to the user's home
   * @return its type, size, mode, permissions, owner, group, time, link target and metadata
   * @throws SandboxFileNotFoundException when there is nothing at {@code path}
   */
  public EntryInfo getInfo(String path) {
    return getInfo(path, FileOptions.defaults());
  }

  /**
   * What a path is.
   *
   * @param path absolute, or relative to the user's home
   * @param options the user and request timeout
   * @return its type, size, mode, permissions, owner, group, time, link target and metadata
   * @throws SandboxFileNotFoundException when there is nothing at {@code path}
   */
  public EntryInfo getInfo(String path, FileOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(options, "options");
    return entryOf(rpc("Stat", Json.object().put("path", path), "get info of " + path, path, options), "get info of " + path);
  }

  /**
   * Watches a folder with E2B's defaults (its direct entries, for 60 s); see
   * {@link #watchDir(String, Consumer, WatchOptions)}.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @param onEvent called for each change
   * @return the watch; stop it when done
   */
  public WatchHandle watchDir(String path, Consumer<FilesystemEvent> onEvent) {
    return watchDir(path, onEvent, WatchOptions.defaults());
  }

  /**
   * Watches a folder, as E2B's {@code files.watchDir}. Returns once the daemon has confirmed the
   * watch, so a change made after this returns is seen. Events reach {@code onEvent} in order on
   * the watch's own thread; a listener that throws ends the watch, and {@link WatchOptions#onExit}
   * hears why.
   *
   * @param path the folder: absolute, or relative to the user's home
   * @param onEvent called for each change
   * @param options recursion, entries, deadline, user, network mounts, exit listener
   * @return the watch; stop it when done
   * @throws SandboxFileNotFoundException when there is no such folder
   * @throws SandboxRpcException ({@code invalid_argument}) when the path is not a folder
   */
  public WatchHandle watchDir(String path, Consumer<FilesystemEvent> onEvent, WatchOptions options) {
    checkPath(path, "path");
    Objects.requireNonNull(onEvent, "onEvent");
    Objects.requireNonNull(options, "options");
    return WatchHandle.open(sandbox, path, onEvent, options);
  }

  // ---- plumbing ----

  private Envd envd() {
    return sandbox.envd();
  }

  private EnvdFiles transfer() {
    return new EnvdFiles(envd());
  }

  private JsonNode rpc(String method, ObjectNode body, String what, String path, FileOptions options) {
    String context = what + " in sandbox " + sandbox.id();
    return envd().unary("filesystem.Filesystem/" + method, body, options.user(), context, path, options.requestTimeout());
  }

  private EntryInfo entryOf(JsonNode answer, String what) {
    JsonNode entry = answer.get("entry");
    if (entry == null || !entry.isObject()) {
      throw new SandboxException(what + " in sandbox " + sandbox.id() + ": the daemon answered without the entry");
    }
    return EntryInfo.of(entry);
  }

  /** Closes a source the caller handed over; the write's outcome stands whatever closing says. */
  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) {
      // the write's outcome stands
    }
  }

  private static void checkPath(@Nullable String path, String name) {
    Objects.requireNonNull(path, name);
    if (path.isEmpty()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
  }
}
