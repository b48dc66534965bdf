package io.sandboxes.e2b;

import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * Moves tar archives in and out of a sandbox through its file API and a few shell steps, each
 * failure naming its step; the temporary files are removed last, on every path.
 */
final class TarTransfer {
  /** Archives are spooled into the sandbox in pieces of this size, so memory holds one piece. */
  static final int IMPORT_PIECE_BYTES = 8 * 1024 * 1024;
  static final Duration EXTRACT_TIMEOUT = Duration.ofSeconds(300);
  static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);
  static final Duration EXPORT_CLEANUP_TIMEOUT = Duration.ofSeconds(20);
  static final int STDERR_QUOTE_LIMIT = 300;
  private static final SecureRandom RANDOM = new SecureRandom();

  private TarTransfer() {}

  /** Single-quotes for the shell, a quote inside becoming {@code '\''}. */
  static String shellQuote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  /** {@code <prefix>-<base36 millis>-<6 random base36>.tar} under /tmp. */
  static String tempName(String prefix) {
    StringBuilder rand = new StringBuilder();
    for (int i = 0; i < 6; i++) {
      rand.append(Character.forDigit(RANDOM.nextInt(36), 36));
    }
    return "/tmp/" + prefix + "-" + Long.toString(System.currentTimeMillis(), 36) + "-" + rand + ".tar";
  }

  private static ExecResult run(LiveSandbox sandbox, String command, Duration timeout) {
    return sandbox.exec(command, ExecOptions.defaults().withTimeout(timeout));
  }

  private static SandboxException stepFailed(String operation, String step, ExecResult r) {
    String err = r.stderr().strip();
    if (err.length() > STDERR_QUOTE_LIMIT) {
      err = err.substring(0, STDERR_QUOTE_LIMIT);
    }
    return new SandboxException(operation + ": " + step + " failed (" + r.exitCode() + "): " + err);
  }

  static void importFiles(LiveSandbox sandbox, String path, InputStream tar) {
    String tarPath = tempName("mol-import");
    String piecePath = tarPath + ".piece";
    try {
      boolean first = true;
      while (true) {
        byte[] piece = tar.readNBytes(IMPORT_PIECE_BYTES);
        if (piece.length == 0) {
          break;
        }
        sandbox.writeBytes(piecePath, piece);
        ExecResult r = run(sandbox, "cat " + piecePath + (first ? " > " : " >> ") + tarPath + " && rm -f " + piecePath, STEP_TIMEOUT);
        if (r.exitCode() != 0) {
          throw stepFailed("importFiles", "spooling the archive", r);
        }
        first = false;
        if (piece.length < IMPORT_PIECE_BYTES) {
          break;
        }
      }
      if (first) {
        ExecResult r = run(sandbox, ": > " + tarPath, STEP_TIMEOUT);
        if (r.exitCode() != 0) {
          throw stepFailed("importFiles", "creating the empty archive", r);
        }
      }
      ExecResult r = run(sandbox, "mkdir -p " + shellQuote(path) + " && tar xf " + tarPath + " -C " + shellQuote(path)
          + " --no-same-owner --no-same-permissions", EXTRACT_TIMEOUT);
      if (r.exitCode() != 0) {
        throw stepFailed("importFiles", "tar extract", r);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("importFiles: reading the archive failed: " + e.getMessage(), e);
    } finally {
      cleanup(sandbox, "rm -f " + tarPath + " " + piecePath, STEP_TIMEOUT);
    }
  }

  static InputStream exportFiles(LiveSandbox sandbox, String path) {
    String trimmed = path.length() > 1 && path.endsWith("/") ? path.replaceAll("/+$", "") : path;
    if (!trimmed.startsWith("/") || trimmed.equals("/") || trimmed.isEmpty()) {
      throw new SandboxException("exportFiles: path must be an absolute directory below \"/\", got '" + path + "'");
    }
    int slash = trimmed.lastIndexOf('/');
    String parent = slash == 0 ? "/" : trimmed.substring(0, slash);
    String base = trimmed.substring(slash + 1);
    String tarPath = tempName("mol-export");
    try {
      ExecResult r = run(sandbox, "tar cf " + tarPath + " -C " + shellQuote(parent) + " " + shellQuote(base), EXTRACT_TIMEOUT);
      if (r.exitCode() != 0) {
        throw stepFailed("exportFiles", "tar create", r);
      }
      return new ByteArrayInputStream(sandbox.readBytes(tarPath));
    } finally {
      cleanup(sandbox, "rm -f " + tarPath, EXPORT_CLEANUP_TIMEOUT);
    }
  }

  private static void cleanup(LiveSandbox sandbox, String command, Duration timeout) {
    try {
      run(sandbox, command, timeout);
    } catch (RuntimeException ignored) {
      // a failed cleanup never masks the outcome; the sandbox's /tmp goes with the sandbox
    }
  }
}
