package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The daemon binary the build compiled ({@code daemon/build.sh}) and packed into this jar, put
 * on the host once so containers can mount it read-only.
 */
public final class DaemonBinary {
  /** Where the build puts the binary on the class path. */
  public static final String RESOURCE = "io/sandboxes/local/daemon/sandboxes-envd-linux-amd64";

  private DaemonBinary() {}

  /** The binary's bytes from the class path. */
  public static byte[] bytes() throws IOException {
    try (InputStream in = DaemonBinary.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IOException("the sandbox daemon binary " + RESOURCE + " is not on the class path (the build compiles it with daemon/build.sh)");
      }
      return in.readAllBytes();
    }
  }

  /**
   * Writes the binary into {@code dir} (made when missing) as {@code sandboxes-envd-<hash>},
   * mode 0755, unless a file with the same content is already there; returns its path. The name
   * carries the content's hash, so a running sandbox's binary is never overwritten by another
   * version.
   */
  public static Path install(Path dir) throws IOException {
    byte[] bytes = bytes();
    String hash;
    try {
      hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    Files.createDirectories(dir);
    Path target = dir.resolve("sandboxes-envd-" + hash);
    if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) && Files.size(target) == bytes.length
        && java.util.Arrays.equals(Files.readAllBytes(target), bytes)) {
      return target;
    }
    Path tmp = Files.createTempFile(dir, ".sandboxes-envd-", ".tmp");
    try {
      Files.write(tmp, bytes);
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    return target;
  }
}
