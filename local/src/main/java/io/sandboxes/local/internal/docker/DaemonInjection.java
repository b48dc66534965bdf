package io.sandboxes.local.internal.docker;

import io.sandboxes.local.internal.daemon.DaemonMounts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a container gets its daemon: the socket folder and the binary, both bind-mounted
 * read-only, and the daemon's supervisor as the container's command and its init (PID 1, in
 * place of Docker's {@code --init}): it reaps orphans and restarts the worker, and as the PID
 * namespace's init it cannot be killed from inside ({@code kill -9 -1} spares it), so nothing in
 * the sandbox can end the sandbox by killing its daemon.
 */
public final class DaemonInjection {
  private DaemonInjection() {}

  /** The spec with the daemon's two read-only mounts added and its supervisor as the command and init. */
  public static DockerRuntime.ContainerSpec withDaemon(DockerRuntime.ContainerSpec spec, Path socketFolder, Path binary) {
    List<DockerRuntime.BindMount> binds = new ArrayList<>(spec.binds());
    binds.add(new DockerRuntime.BindMount(socketFolder.toAbsolutePath(), DaemonMounts.SOCKET_DIR, true));
    binds.add(new DockerRuntime.BindMount(binary.toAbsolutePath(), DaemonMounts.BINARY, true));
    return spec.withBinds(binds).withCommand(List.of(DaemonMounts.BINARY, "supervise", DaemonMounts.SOCKET))
        .withLabel(DockerRuntime.LABEL_OWN_INIT, "true");
  }
}
