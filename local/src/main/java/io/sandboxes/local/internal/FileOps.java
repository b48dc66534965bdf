package io.sandboxes.local.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.docker.RawExec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * envd's file operations, done inside the sandbox by small shell programs run as the requesting
 * user, so the sandbox's own permissions apply and no path is ever resolved on the host. Paths
 * that are relative (or start with {@code ~}) resolve against that user's home.
 */
public final class FileOps {
  // exit codes the helper programs use to say what went wrong
  static final int NOT_FOUND = 90;
  static final int IS_DIR = 91;
  static final int NOT_DIR = 92;
  static final int EXISTS = 93;

  private static final String RESOLVE = """
      r() { case $1 in "~") printf '%s' "$HOME";; "~/"*) printf '%s/%s' "$HOME" "${1#"~/"}";; /*) printf '%s' "$1";; *) printf '%s/%s' "$HOME" "$1";; esac; }
      """;
  /** type-after-links, size, permission bits, symbolic mode, owner, group, mtime, link target, path. */
  private static final String ENTRY_FORMAT = "%Y\\t%s\\t%m\\t%M\\t%u\\t%g\\t%T@\\t%l\\t%p\\0";

  private final LocalSandbox sandbox;

  FileOps(LocalSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /** A helper program: {@code script} with the path resolver in front, and its arguments. */
  private static List<String> command(String script, String... args) {
    List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", RESOLVE + script, "sh"));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private DockerRuntime.Completed sh(String user, String script, @Nullable InputStream stdin, String... args) throws RpcError {
    return sandbox.run(user, command(script, args), stdin);
  }

  private static RpcError failure(DockerRuntime.Completed c, String path, String what) {
    Integer code = c.exitCode();
    String err = c.stderrText();
    if (code == null) {
      return new RpcError("unavailable", what + " " + path + ": the outcome could not be observed");
    }
    return switch (code) {
      case NOT_FOUND -> new RpcError("not_found", "path '" + path + "' does not exist");
      case IS_DIR -> new RpcError("invalid_argument", "path '" + path + "' is a directory");
      case NOT_DIR -> new RpcError("invalid_argument", "path '" + path + "' is not a directory");
      case EXISTS -> new RpcError("already_exists", "path '" + path + "' already exists");
      default -> err.contains("Permission denied")
          ? new RpcError("permission_denied", what + " " + path + ": " + err)
          : new RpcError("internal", what + " " + path + " failed (exit " + code + "): " + err);
    };
  }

  /** Opens the destination of a read, once the file is known to be readable. */
  @FunctionalInterface
  public interface ReadTarget {
    OutputStream open() throws IOException;
  }

  /** The byte the read helper prints before the file, so nothing else is ever taken for content. */
  private static final int CONTENT_FOLLOWS = 'K';

  /**
   * Streams the file's bytes to {@code target} without holding them in memory. The target is
   * opened only once the file is known to exist and be readable (or is known to be empty), so
   * every refusal comes as an {@link RpcError} before anything was sent.
   *
   * @throws RpcError when the file cannot be read; nothing has been written
   * @throws IOException when sending fails, or the read breaks off after the target was opened
   *     (the answer is then incomplete and must be aborted, never finished)
   */
  public void read(String user, String path, ReadTarget target) throws RpcError, IOException {
    if (DaemonSwitch.on()) {
      readByDaemon(user, path, target);
      return;
    }
    List<String> cmd = command("""
        p=$(r "$1")
        if [ -d "$p" ]; then exit 91; fi
        if [ ! -e "$p" ]; then exit 90; fi
        if [ ! -r "$p" ]; then echo "cat: $p: Permission denied" >&2; exit 1; fi
        printf K
        exec cat -- "$p"
        """, path);
    java.io.ByteArrayOutputStream early = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    OutputStream out = null;
    boolean marked = false;
    try (RawExec exec = sandbox.open(user, cmd)) {
      RawExec.Frame frame;
      while ((frame = exec.read()) != null) {
        byte[] data = frame.data();
        if (frame.stream() == RawExec.Stream.STDERR) {
          if (err.size() < 64 * 1024) {
            err.write(data);
          }
          continue;
        }
        if (!marked) {
          if (early.size() == 0 && data.length > 0 && data[0] == CONTENT_FOLLOWS) {
            marked = true;
            out = target.open();
            out.write(data, 1, data.length - 1);
          } else if (early.size() < 64 * 1024) {
            early.write(data); // not the helper talking (Docker's own complaint): an error to report
          }
          continue;
        }
        out.write(data);
      }
      Integer code = sandbox.exitCode(exec);
      if (marked && code != null && code == 0) {
        return;
      }
      DockerRuntime.Completed c = new DockerRuntime.Completed(code, early.toByteArray(), err.toByteArray());
      if (marked) {
        throw new IOException("reading " + path + " broke off: " + (code == null ? "the outcome could not be observed"
            : "exit " + code + (c.stderrText().isEmpty() ? "" : ": " + c.stderrText())));
      }
      LocalSandbox.refuseUnknownUser(c, user);
      throw failure(c, path, "read");
    }
  }

  /** Writes the stream to the file, creating parents. @return the absolute path written */
  public String write(String user, String path, InputStream content) throws RpcError {
    if (DaemonSwitch.on()) {
      return DaemonFiles.write(sandbox.daemon(), user, path, content);
    }
    DockerRuntime.Completed c = sh(user, """
        p=$(r "$1")
        if [ -d "$p" ]; then cat >/dev/null; exit 91; fi
        mkdir -p -- "$(dirname -- "$p")" || { cat >/dev/null; exit 1; }
        cat > "$p" || exit 1
        readlink -f -- "$p"
        """, content, path);
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, path, "write");
    }
    return c.stdoutText().strip();
  }

  public ObjectNode stat(String user, String path) throws RpcError {
    if (DaemonSwitch.on()) {
      try {
        return DaemonFiles.entry(sandbox.daemon().stat(path, user));
      } catch (IOException e) {
        throw DaemonFiles.error(e, path, "stat", user);
      }
    }
    DockerRuntime.Completed c = sh(user, """
        p=$(r "$1")
        if [ ! -e "$p" ] && [ ! -L "$p" ]; then exit 90; fi
        find "$p" -maxdepth 0 -printf '%s'
        """.formatted(ENTRY_FORMAT), null, path);
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, path, "stat");
    }
    List<ObjectNode> entries = parseEntries(c.stdout());
    if (entries.isEmpty()) {
      throw new RpcError("internal", "stat " + path + " gave no entry");
    }
    return entries.get(0);
  }

  public ArrayNode list(String user, String path, int depth) throws RpcError {
    if (DaemonSwitch.on()) {
      try {
        ArrayNode out = Json.array();
        for (io.sandboxes.local.internal.daemon.EntryInfo e : sandbox.daemon().list(path, user, depth)) {
          out.add(DaemonFiles.entry(e));
        }
        return out;
      } catch (IOException e) {
        throw DaemonFiles.error(e, path, "list", user);
      }
    }
    DockerRuntime.Completed c = sh(user, """
        p=$(r "$1")
        if [ ! -e "$p" ]; then exit 90; fi
        if [ ! -d "$p" ]; then exit 92; fi
        find "$p" -mindepth 1 -maxdepth "$2" -printf '%s'
        """.formatted(ENTRY_FORMAT), null, path, Integer.toString(depth));
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, path, "list");
    }
    ArrayNode out = Json.array();
    parseEntries(c.stdout()).forEach(out::add);
    return out;
  }

  public ObjectNode makeDir(String user, String path) throws RpcError {
    if (DaemonSwitch.on()) {
      try {
        return DaemonFiles.entry(sandbox.daemon().makeDirs(path, user));
      } catch (IOException e) {
        throw DaemonFiles.error(e, path, "make directory", user);
      }
    }
    DockerRuntime.Completed c = sh(user, """
        p=$(r "$1")
        if [ -d "$p" ]; then exit 93; fi
        if [ -e "$p" ] || [ -L "$p" ]; then exit 92; fi
        mkdir -p -- "$p" || exit 1
        find "$p" -maxdepth 0 -printf '%s'
        """.formatted(ENTRY_FORMAT), null, path);
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, path, "make directory");
    }
    return parseEntries(c.stdout()).get(0);
  }

  public ObjectNode move(String user, String source, String destination) throws RpcError {
    if (DaemonSwitch.on()) {
      return DaemonFiles.move(sandbox.daemon(), user, source, destination);
    }
    DockerRuntime.Completed c = sh(user, """
        s=$(r "$1"); d=$(r "$2")
        if [ ! -e "$s" ] && [ ! -L "$s" ]; then exit 90; fi
        mkdir -p -- "$(dirname -- "$d")" && mv -T -- "$s" "$d" || exit 1
        find "$d" -maxdepth 0 -printf '%s'
        """.formatted(ENTRY_FORMAT), null, source, destination);
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, source, "move");
    }
    return parseEntries(c.stdout()).get(0);
  }

  public void remove(String user, String path) throws RpcError {
    if (DaemonSwitch.on()) {
      try {
        sandbox.daemon().remove(path, user);
      } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
        if (e.kind() != io.sandboxes.local.internal.daemon.DaemonException.Kind.NOT_FOUND) {
          throw DaemonFiles.error(e, path, "remove", user); // removing what is not there succeeds, as rm -rf does
        }
      } catch (IOException e) {
        throw DaemonFiles.error(e, path, "remove", user);
      }
      return;
    }
    DockerRuntime.Completed c = sh(user, """
        p=$(r "$1")
        rm -rf -- "$p"
        """, null, path);
    if (c.exitCode() == null || c.exitCode() != 0) {
      throw failure(c, path, "remove");
    }
  }

  private void readByDaemon(String user, String path, ReadTarget target) throws RpcError, IOException {
    io.sandboxes.local.internal.daemon.FileRead in;
    try {
      in = sandbox.daemon().readFile(path, user);
    } catch (IOException e) {
      throw DaemonFiles.error(e, path, "read", user);
    }
    try (in) {
      OutputStream out = target.open();
      in.transferTo(out); // a failure now breaks off an answer already begun: the caller aborts it
    }
  }

  static List<ObjectNode> parseEntries(byte[] raw) {
    List<ObjectNode> out = new ArrayList<>();
    String all = new String(raw, StandardCharsets.UTF_8);
    for (String record : all.split("\0")) {
      if (record.isEmpty()) {
        continue;
      }
      String[] f = record.split("\t", 9);
      if (f.length < 9) {
        continue;
      }
      String path = f[8];
      ObjectNode e = Json.object();
      e.put("name", path.equals("/") ? "/" : path.substring(path.lastIndexOf('/') + 1));
      e.put("type", switch (f[0]) {
        case "f" -> "FILE_TYPE_FILE";
        case "d" -> "FILE_TYPE_DIRECTORY";
        default -> "FILE_TYPE_UNSPECIFIED";
      });
      e.put("path", path);
      e.put("size", f[1]);
      e.put("mode", Integer.parseInt(f[2], 8) & 0777);
      String perms = f[3];
      e.put("permissions", perms.startsWith("l") ? "L" + perms.substring(1) : perms);
      e.put("owner", f[4]);
      e.put("group", f[5]);
      BigDecimal seconds = new BigDecimal(f[6]);
      Instant mtime = Instant.ofEpochSecond(seconds.longValue(), seconds.remainder(BigDecimal.ONE).movePointRight(9).longValue());
      e.put("modifiedTime", mtime.toString());
      if (!f[7].isEmpty()) {
        String target = f[7].startsWith("/") ? f[7] : parentOf(path) + "/" + f[7];
        e.put("symlinkTarget", java.nio.file.Path.of(target).normalize().toString());
      }
      out.add(e);
    }
    return out;
  }

  private static String parentOf(String path) {
    int i = path.lastIndexOf('/');
    return i <= 0 ? "" : path.substring(0, i);
  }
}
