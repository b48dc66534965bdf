package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.EntryInfo;
import java.io.IOException;

/** envd's JSON for what the in-sandbox daemon answers about files, and its errors as envd's. */
final class DaemonFiles {
  private DaemonFiles() {}

  /** An entry as envd's {@code EntryInfo} message. */
  static FileEntry entry(EntryInfo e) {
    String path = e.path();
    EntryInfo.Type seen = e.type() == EntryInfo.Type.SYMLINK ? e.targetType() : e.type();
    String type = seen == EntryInfo.Type.FILE ? "FILE_TYPE_FILE" : seen == EntryInfo.Type.DIRECTORY ? FileEntry.DIRECTORY
        : "FILE_TYPE_UNSPECIFIED";
    String symlinkTarget = null;
    if (e.symlinkTarget() != null) {
      String t = e.symlinkTarget();
      if (!t.startsWith("/")) { // a broken link's raw text: made absolute beside the link
        int i = path.lastIndexOf('/');
        t = (i <= 0 ? "" : path.substring(0, i)) + "/" + t;
      }
      symlinkTarget = java.nio.file.Path.of(t).normalize().toString();
    }
    return new FileEntry(path.equals("/") ? "/" : e.name(), type, path, Long.toString(e.size()), e.mode() & 0777,
        permissions(e.mode()), e.owner(), e.group(), e.modified().toString(), symlinkTarget, new java.util.TreeMap<>(e.metadata()));
  }

  /** {@code ls -l}'s mode string, with envd's {@code L} for a symlink. */
  static String permissions(int mode) {
    char type = switch (mode & 0170000) {
      case 0040000 -> 'd';
      case 0120000 -> 'L';
      case 0020000 -> 'c';
      case 0060000 -> 'b';
      case 0010000 -> 'p';
      case 0140000 -> 's';
      default -> '-';
    };
    StringBuilder b = new StringBuilder().append(type);
    String rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++) {
      b.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
    }
    if ((mode & 04000) != 0) {
      b.setCharAt(3, b.charAt(3) == 'x' ? 's' : 'S');
    }
    if ((mode & 02000) != 0) {
      b.setCharAt(6, b.charAt(6) == 'x' ? 's' : 'S');
    }
    if ((mode & 01000) != 0) {
      b.setCharAt(9, b.charAt(9) == 'x' ? 't' : 'T');
    }
    return b.toString();
  }

  /** A daemon failure as the RPC error envd gives for it. */
  static RpcError error(IOException e, String path, String what, String user) {
    if (!(e instanceof DaemonException d)) {
      return new RpcError("unavailable", what + " " + path + ": " + e.getMessage());
    }
    return switch (d.kind()) {
      case NOT_FOUND -> new RpcError("not_found", "path '" + path + "' does not exist");
      case IS_DIRECTORY -> new RpcError("invalid_argument", "path '" + path + "' is a directory");
      case NOT_DIRECTORY -> new RpcError("invalid_argument", "path '" + path + "' is not a directory");
      case EXISTS -> new RpcError("already_exists", "path '" + path + "' already exists");
      case PERMISSION -> new RpcError("permission_denied", what + " " + path + ": Permission denied");
      case UNKNOWN_USER -> new RpcError("unauthenticated", "invalid user: '" + user + "'");
      case NO_SPACE -> new RpcError("resource_exhausted", what + " " + path + ": no space left on the sandbox's disk");
      case INVALID -> new RpcError("invalid_argument", what + " " + path + ": " + d.getMessage());
      case DISCONNECTED -> new RpcError("unavailable", what + " " + path + ": the sandbox's daemon went away");
      case TIMEOUT -> new RpcError("deadline_exceeded", what + " " + path + ": " + d.getMessage());
      case LIMIT, TOO_LARGE -> new RpcError("resource_exhausted", what + " " + path + ": " + d.getMessage());
      // e.g. file metadata, kept in extended attributes, which gVisor (runsc 2022-12-19) does not store on a sandbox's own files
      case UNSUPPORTED -> new RpcError("unimplemented", what + " " + path + ": " + d.getMessage()
          + " (this sandbox's file system does not support it; file metadata needs extended attributes)");
      default -> new RpcError("internal", what + " " + path + " failed: " + d.getMessage());
    };
  }

  /**
   * Writes a file; through a dangling symlink the write creates the link's target, as envd's
   * (and {@code cat >}'s) does. The file's metadata becomes {@code metadata} (envd replaces it on
   * every upload; an empty map clears it).
   *
   * @return the written file's entry
   */
  static EntryInfo write(DaemonConnection conn, String user, String path, java.io.InputStream content,
      java.util.Map<String, String> metadata) throws RpcError {
    String target = path;
    try {
      // the daemon writes as root (as envd does), so an absolute path is looked at as root too: a
      // user's write under a folder it may not enter is the daemon's to do, not refused here
      EntryInfo e = conn.stat(path, path.startsWith("/") ? "root" : user);
      if (e.type() == EntryInfo.Type.SYMLINK && e.targetType() == null && e.symlinkTarget() != null) {
        target = entry(e).symlinkTarget();
      }
    } catch (DaemonException e) {
      if (e.kind() != DaemonException.Kind.NOT_FOUND && e.kind() != DaemonException.Kind.NOT_DIRECTORY) {
        throw error(e, path, "write", user);
      }
    } catch (IOException e) {
      throw error(e, path, "write", user);
    }
    try {
      return conn.writeFile(target, user, content, metadata);
    } catch (IOException e) {
      throw error(e, path, "write", user);
    }
  }

  /** {@code mv -T}: the destination's missing parents are made first. */
  static FileEntry move(DaemonConnection conn, String user, String source, String destination) throws RpcError {
    try {
      conn.stat(source, user);
    } catch (IOException e) {
      throw error(e, source, "move", user);
    }
    String dest = destination.endsWith("/") && destination.length() > 1 ? destination.substring(0, destination.length() - 1) : destination;
    int slash = dest.lastIndexOf('/');
    if (slash > 0) {
      try {
        conn.makeDirs(dest.substring(0, slash), user);
      } catch (DaemonException e) {
        if (e.kind() != DaemonException.Kind.EXISTS) {
          throw error(e, destination, "move", user);
        }
      } catch (IOException e) {
        throw error(e, destination, "move", user);
      }
    }
    try {
      return entry(conn.rename(source, dest, user));
    } catch (IOException e) {
      throw error(e, source, "move", user);
    }
  }
}
