package io.sandboxes.local.internal.docker;

import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonListener;
import io.sandboxes.local.internal.runtime.DaemonLink;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's daemon link on Docker: a listening unix socket in the sandbox's own folder on the
 * host, which is bind-mounted read-only into its container (see {@link DaemonInjection}). Made
 * when the sandbox is created, opened again in the same folder by a restarted server (the folder
 * is recorded in a container label), removed when the sandbox is gone.
 */
public final class SocketDaemonLink implements DaemonLink {
  /** The container label that records the sandbox's socket folder on the host. */
  public static final String LABEL_FOLDER = "io.sandboxes.daemon-folder";
  /** A unix socket path holds at most 107 bytes. */
  private static final int MAX_SOCKET_PATH = 107;

  private final DaemonListener listener;
  private final Path folder;

  private SocketDaemonLink(DaemonListener listener) {
    this.listener = listener;
    this.folder = listener.folder();
  }

  /** Listens in {@code folder} (made when missing; a socket an earlier server left is replaced). */
  static SocketDaemonLink open(Path folder) throws IOException {
    return new SocketDaemonLink(DaemonListener.open(folder));
  }

  /**
   * The folder for a sandbox's socket: under the state folder when the socket's path fits a unix
   * socket, else under a short per-user folder in /tmp named by the state folder's hash.
   */
  static Path folderFor(Path stateDir, String sandboxId) {
    Path preferred = stateDir.toAbsolutePath().resolve("envd").resolve(sandboxId);
    if (preferred.resolve(DaemonListener.SOCKET_NAME).toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH) {
      return preferred;
    }
    String hash;
    try {
      hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(stateDir.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8))).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    return Path.of("/tmp", "sandboxes-envd-" + System.getProperty("user.name", "user"), hash, sandboxId);
  }

  /** @return the folder of the socket, mounted into the container */
  Path folder() {
    return folder;
  }

  @Override
  public Map<String, String> labels() {
    return Map.of(LABEL_FOLDER, folder.toString());
  }

  @Override
  public @Nullable DaemonConnection current() {
    return listener.current();
  }

  @Override
  public DaemonConnection await(Duration timeout) throws IOException, TimeoutException {
    return listener.awaitConnection(timeout);
  }

  @Override
  public void close() {
    listener.close();
  }

  @Override
  public void delete() {
    close();
    deleteTree(folder);
  }

  /** Removes a folder and what it holds, best effort. */
  public static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | RuntimeException e) {
      // best effort: a folder left behind holds nothing but a dead socket
    }
  }
}
