package io.sandboxes.local.internal;

import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonListener;
import io.sandboxes.local.internal.daemon.DaemonMounts;
import io.sandboxes.local.internal.docker.DockerRuntime;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * One sandbox's in-sandbox daemon as the server holds it: the listening socket in the sandbox's
 * own folder (bind-mounted read-only into the container) and, through it, the daemon's current
 * connection. Made when the sandbox is created, opened again in the same folder by a restarted
 * server (the folder is recorded in a container label), closed when the sandbox is killed.
 */
public final class SandboxDaemon implements AutoCloseable {
  /** The container label that records the sandbox's socket folder on the host. */
  static final String LABEL_FOLDER = "io.sandboxes.daemon-folder";
  /** How long a call waits for the daemon to (re)connect: after a start, a resume or a restart. */
  static final Duration CONNECT = Duration.ofSeconds(20);
  /** A unix socket path holds at most 107 bytes. */
  private static final int MAX_SOCKET_PATH = 107;

  private final DaemonListener listener;
  private final Path folder;
  private volatile @Nullable List<String> containerEnv;

  private SandboxDaemon(DaemonListener listener) {
    this.listener = listener;
    this.folder = listener.folder();
  }

  /** Listens in {@code folder} (made when missing; a socket an earlier server left is replaced). */
  static SandboxDaemon open(Path folder) throws IOException {
    return new SandboxDaemon(DaemonListener.open(folder));
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

  /** The spec with the daemon's mounts, its supervisor as the command and the folder label. */
  DockerRuntime.ContainerSpec apply(DockerRuntime.ContainerSpec spec, Path binary) {
    return DaemonMounts.withDaemon(spec, folder, binary);
  }

  Path folder() {
    return folder;
  }

  /** The current connection, when the daemon is connected now. */
  public @Nullable DaemonConnection current() {
    return listener.current();
  }

  /**
   * The daemon's connection, waiting for it to come (back) for up to {@link #CONNECT}.
   *
   * @throws RpcError unavailable when no daemon connected in that time
   */
  public DaemonConnection connection() throws RpcError {
    try {
      return listener.awaitConnection(CONNECT);
    } catch (TimeoutException | IOException e) {
      throw new RpcError("unavailable", "the sandbox's daemon is not connected: " + e.getMessage());
    }
  }

  /** Waits for the daemon's first connection after a start. */
  void awaitConnected(Duration timeout) throws IOException, TimeoutException {
    listener.awaitConnection(timeout);
  }

  /** The environment the container was made with (the image's and the sandbox's), read once. */
  List<String> containerEnv(SandboxEngine engine, String instanceId) {
    List<String> env = containerEnv;
    if (env == null) {
      env = engine.environment(instanceId);
      containerEnv = env;
    }
    return env;
  }

  /** Stops listening (the daemon's processes run on; a restarted server takes them back). */
  @Override
  public void close() {
    listener.close();
  }

  /** Stops listening and removes the folder: the sandbox is gone. */
  void delete() {
    close();
    deleteTree(folder);
  }

  static void deleteTree(Path root) {
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
