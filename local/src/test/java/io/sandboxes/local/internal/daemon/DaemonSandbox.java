package io.sandboxes.local.internal.daemon;

import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DaemonInjection;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A real container running the daemon, made the way the runtime will make one: DockerRuntime's
 * create with the daemon's two read-only mounts and its supervisor as the command, labelled as
 * ours so cleanup finds it. Closing removes the container and the host folders.
 */
final class DaemonSandbox implements AutoCloseable {
  static final Duration CONNECT = Duration.ofSeconds(20);

  final DockerRuntime docker;
  final Path root;
  final Path socketFolder;
  final String containerId;
  DaemonListener listener;

  private DaemonSandbox(DockerRuntime docker, Path root, Path socketFolder, String containerId, DaemonListener listener) {
    this.docker = docker;
    this.root = root;
    this.socketFolder = socketFolder;
    this.containerId = containerId;
    this.listener = listener;
  }

  static DaemonSandbox start() throws Exception {
    return start(BaseImage.reference(), Map.of());
  }

  static DaemonSandbox start(String image, Map<String, String> tmpfs) throws Exception {
    DockerRuntime docker = DockerRuntime.connect();
    Path root = Files.createTempDirectory(Path.of("/tmp"), "sbxd-");
    Path binary = DaemonBinary.install(root.resolve("bin"));
    Path folder = root.resolve("s");
    DaemonListener listener = DaemonListener.open(folder);
    String name = "sandboxes-daemon-test-" + UUID.randomUUID().toString().substring(0, 8);
    DockerRuntime.ContainerSpec spec = new DockerRuntime.ContainerSpec(image, name,
        Map.of(DockerRuntime.LABEL_OURS, "true"), List.of(), name, 2, 1L << 30, 1024, Map.of(), null)
        .withTmpfs(tmpfs);
    String id;
    try {
      id = docker.createAndStart(DaemonInjection.withDaemon(spec, folder, binary));
    } catch (RuntimeException e) {
      listener.close();
      deleteTree(root);
      throw e;
    }
    DaemonSandbox s = new DaemonSandbox(docker, root, folder, id, listener);
    try {
      listener.awaitConnection(CONNECT);
    } catch (Exception e) {
      s.close();
      throw e;
    }
    return s;
  }

  DaemonConnection conn() throws Exception {
    return listener.awaitConnection(CONNECT);
  }

  /** Runs a command through the daemon as root and collects it. */
  DaemonProcess.Result run(String... argv) throws Exception {
    try (DaemonProcess p = conn().start(ProcessSpec.of(argv))) {
      return p.collect();
    }
  }

  /** Runs a shell command through the daemon as root and returns its stdout. */
  String sh(String script) throws Exception {
    DaemonProcess.Result r = run("/bin/sh", "-c", script);
    if (!r.status().exited() || r.status().exitCode() != 0) {
      throw new AssertionError("'" + script + "' ended with " + r.status().describe() + ": " + r.stderrText());
    }
    return r.stdoutText();
  }

  @Override
  public void close() throws IOException {
    try {
      docker.remove(containerId);
    } finally {
      listener.close();
      deleteTree(root);
    }
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
