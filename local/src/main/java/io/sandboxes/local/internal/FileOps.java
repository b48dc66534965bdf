package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.FileRead;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * envd's file operations, done by the in-sandbox daemon under the requesting user's file-system
 * identity, so the sandbox's own permissions apply and no path is ever resolved on the host.
 * Paths that are relative (or start with {@code ~}) resolve against that user's home.
 */
public final class FileOps {
  private final LocalSandbox sandbox;

  FileOps(LocalSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /** Opens the destination of a read, once the file is known to be readable. */
  @FunctionalInterface
  public interface ReadTarget {
    OutputStream open() throws IOException;
  }

  /**
   * Streams the file's bytes to {@code target} without holding them in memory. The target is
   * opened only once the file is known to exist and be readable, so every refusal comes as an
   * {@link RpcError} before anything was sent.
   *
   * @throws RpcError when the file cannot be read; nothing has been written
   * @throws IOException when sending fails, or the read breaks off after the target was opened
   *     (the answer is then incomplete and must be aborted, never finished)
   */
  public void read(String user, String path, ReadTarget target) throws RpcError, IOException {
    FileRead in;
    try {
      in = sandbox.viaDaemon(d -> d.readFile(path, user), FileRead::close);
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "read", user);
    }
    try (in) {
      OutputStream out = target.open();
      in.transferTo(out);
    }
  }

  /**
   * Writes the stream to the file (atomically), creating parents, with this metadata (replacing
   * what the file had; empty clears it).
   *
   * @return the written file's entry, as envd's {@code EntryInfo}
   */
  public FileEntry write(String user, String path, InputStream content, java.util.Map<String, String> metadata) throws RpcError {
    try {
      return DaemonFiles.entry(sandbox.viaDaemon(d -> DaemonFiles.write(d, user, path, content, metadata), null));
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "write", user);
    }
  }

  public FileEntry stat(String user, String path) throws RpcError {
    try {
      return DaemonFiles.entry(sandbox.viaDaemon(d -> d.stat(path, user), null));
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "stat", user);
    }
  }

  public java.util.List<FileEntry> list(String user, String path, int depth) throws RpcError {
    try {
      return sandbox.viaDaemon(d -> d.list(path, user, depth), null).stream().map(DaemonFiles::entry).toList();
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "list", user);
    }
  }

  public FileEntry makeDir(String user, String path) throws RpcError {
    try {
      return DaemonFiles.entry(sandbox.viaDaemon(d -> d.makeDirs(path, user), null));
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "make directory", user);
    }
  }

  public FileEntry move(String user, String source, String destination) throws RpcError {
    try {
      return sandbox.viaDaemon(d -> DaemonFiles.move(d, user, source, destination), null);
    } catch (IOException e) {
      throw DaemonFiles.error(e, source, "move", user);
    }
  }

  /** Removes a file or a whole tree; removing what is not there succeeds, as envd's does. */
  public void remove(String user, String path) throws RpcError {
    try {
      sandbox.viaDaemon(d -> {
        d.remove(path, user);
        return Boolean.TRUE;
      }, null);
    } catch (DaemonException e) {
      if (e.kind() != DaemonException.Kind.NOT_FOUND) {
        throw DaemonFiles.error(e, path, "remove", user);
      }
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "remove", user);
    }
  }
}
