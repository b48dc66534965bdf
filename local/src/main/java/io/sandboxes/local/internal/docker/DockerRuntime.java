package io.sandboxes.local.internal.docker;

import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.InstanceLabels;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.testcontainers.shaded.com.github.dockerjava.core.DefaultDockerClientConfig;
import org.testcontainers.shaded.com.github.dockerjava.core.DockerClientImpl;

/**
 * The local runtime's hold on Docker: containers as sandboxes, {@code docker exec} as processes.
 * The engine is found by {@link DockerLocator} (which looks where Docker and Testcontainers users
 * expect: {@code DOCKER_HOST}, Testcontainers' properties, the docker CLI's context, the usual
 * sockets) and spoken to with the docker-java client Testcontainers ships. Close it to release
 * the client's connections.
 */
public final class DockerRuntime implements AutoCloseable {
  /** {@link InstanceLabels#OURS}: marks a container as made by the local runtime; cleanup touches nothing without it. */
  public static final String LABEL_OURS = InstanceLabels.OURS;
  /**
   * Marks a container whose command is its own init (PID 1, reaping orphans): Docker's
   * {@code --init} is then left out.
   */
  public static final String LABEL_OWN_INIT = "io.sandboxes.own-init";
  public static final String LABEL_SANDBOX_ID = InstanceLabels.SANDBOX_ID;
  public static final String LABEL_TEMPLATE = InstanceLabels.TEMPLATE;
  public static final String LABEL_METADATA = InstanceLabels.METADATA;
  public static final String LABEL_DEADLINE = InstanceLabels.DEADLINE;
  public static final String LABEL_STARTED = InstanceLabels.STARTED;
  public static final String LABEL_ENVD_TOKEN = InstanceLabels.ENVD_TOKEN;
  public static final String LABEL_SERVER = InstanceLabels.SERVER;

  private final DockerClient docker;
  private final com.github.dockerjava.transport.DockerHttpClient http;
  private final DockerLocator.Found engine;
  /** The OCI runtime sandbox containers run on ({@code docker run --runtime}); null for the engine's default. */
  private final @Nullable String runtime;

  private DockerRuntime(com.github.dockerjava.transport.DockerHttpClient http, DockerLocator.Found engine, @Nullable String runtime) {
    this.http = http;
    this.docker = client(engine, http);
    this.engine = engine;
    this.runtime = runtime;
  }

  /**
   * Connects to the first Docker engine that answers where this process's environment says to
   * look.
   *
   * @return a connected runtime
   * @throws io.sandboxes.SandboxException within a few seconds when no engine answers, naming
   *     every place tried and why each failed
   */
  public static DockerRuntime connect() {
    return connect(DockerLocator.Environment.system());
  }

  /**
   * Connects to the first Docker engine that answers where {@code env} says to look.
   *
   * @param env where to look
   * @return a connected runtime
   * @throws io.sandboxes.SandboxException when no engine answers
   */
  public static DockerRuntime connect(DockerLocator.Environment env) {
    return connect(env, null);
  }

  /**
   * Connects to the first Docker engine that answers where this process's environment says to
   * look, for sandbox containers on the given OCI runtime. Whether the engine knows the runtime
   * is {@link SandboxRuntime#check}'s to say.
   *
   * @param runtime the runtime's name in Docker (e.g. {@code runsc}), or null for the engine's default
   * @return a connected runtime
   * @throws io.sandboxes.SandboxException when no engine answers
   */
  public static DockerRuntime connect(@Nullable String runtime) {
    return connect(DockerLocator.Environment.system(), runtime);
  }

  private static DockerRuntime connect(DockerLocator.Environment env, @Nullable String runtime) {
    DockerLocator.Found engine = DockerLocator.locate(env);
    return new DockerRuntime(new com.github.dockerjava.zerodep.ZerodepDockerHttpClient.Builder().dockerHost(engine.host()).build(),
        engine, runtime);
  }

  /** @return the OCI runtime sandbox and build containers run on, or null for the engine's default */
  public @Nullable String runtime() {
    return runtime;
  }

  /**
   * Testcontainers' client classes, put together here rather than through
   * {@code DockerClientFactory} or {@code DockerClientProviderStrategy.getClientForConfig}. The
   * factory starts the Ryuk reaper (an image pull from Docker Hub), resolves the host address
   * with a helper container, runs its checks, logs a banner, and its strategies call JNA; it
   * retries for minutes and then caches the failure for the life of the JVM.
   * {@code getClientForConfig} avoids all that but wraps the configuration in Testcontainers'
   * registry-auth lookup, which logs a failure for every local image a container is made from
   * (and may run credential helpers), and settles the API version by trial (1.44, else 1.32)
   * where the ping has already said which one the engine speaks. A blank configuration builder
   * reads no environment variable and no file: the locator has decided everything it needs.
   */
  private static DockerClient client(DockerLocator.Found engine, com.github.dockerjava.transport.DockerHttpClient http) {
    DefaultDockerClientConfig config = new DefaultDockerClientConfig.Builder()
        .withDockerHost(engine.host().toString())
        .withApiVersion(engine.apiVersion())
        .build();
    return DockerClientImpl.getInstance(config, http);
  }

  /**
   * A GET of the engine's API as raw JSON, for fields docker-java's models leave out (a
   * container's {@code GraphDriver.Data.UpperDir}).
   *
   * @param path the API path, e.g. {@code /containers/<id>/json}
   * @param max the most bytes of answer read
   * @return the answer's body, or null when the engine answered 404
   * @throws IOException for any other answer, or one longer than {@code max}
   */
  public byte @Nullable [] getJson(String path, int max) throws IOException {
    com.github.dockerjava.transport.DockerHttpClient.Request request = com.github.dockerjava.transport.DockerHttpClient.Request
        .builder().method(com.github.dockerjava.transport.DockerHttpClient.Request.Method.GET).path(path).build();
    try (com.github.dockerjava.transport.DockerHttpClient.Response r = http.execute(request);
        InputStream in = r.getBody()) {
      if (r.getStatusCode() == 404) {
        return null;
      }
      byte[] body = in.readNBytes(max + 1);
      if (body.length > max) {
        throw new IOException("the engine's answer to GET " + path + " is longer than " + max + " bytes");
      }
      if (r.getStatusCode() != 200) {
        throw new IOException("GET " + path + " answered " + r.getStatusCode() + ": "
            + new String(body, java.nio.charset.StandardCharsets.UTF_8).strip());
      }
      return body;
    } catch (RuntimeException e) {
      throw new IOException("GET " + path + " failed: " + e.getMessage(), e);
    }
  }

  public DockerClient client() {
    return docker;
  }

  /**
   * Removes an image or one of its names, and with {@code prune} also the untagged parents that
   * nothing else is built on (Docker's default).
   *
   * @param force whether to remove it even while other names or stopped containers hold it
   * @param prune whether untagged parents go with it; without, each image goes only when asked for
   * @return false when there was no such image
   * @throws InUse when something still uses it
   */
  public boolean removeImage(String reference, boolean force, boolean prune) {
    try {
      docker.removeImageCmd(reference).withForce(force).withNoPrune(!prune).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (ConflictException e) {
      throw new InUse(e.getMessage(), e);
    }
  }

  /** @return the engine this runtime speaks to, and where it was found */
  public DockerLocator.Found engine() {
    return engine;
  }

  /** Releases the client's connections. Idempotent. */
  @Override
  public void close() {
    try {
      docker.close();
    } catch (IOException | RuntimeException ignored) {
      // nothing left to release
    }
  }

  /** A host path bind-mounted into a container. */
  public record BindMount(java.nio.file.Path hostPath, String containerPath, boolean readOnly) {}

  /**
   * What a sandbox container is made of.
   *
   * @param binds host paths to bind-mount
   * @param tmpfs tmpfs mounts: container path to mount options (e.g. {@code size=1m})
   * @param command the container's command; null for {@code sleep infinity}
   * @param diskQuotaMB the storage driver's limit on the writable layer, 0 for none
   */
  public record ContainerSpec(
      String image,
      String name,
      Map<String, String> labels,
      List<String> env,
      String hostname,
      int cpuCount,
      long memoryBytes,
      long pidsLimit,
      Map<String, String> volumes,
      @Nullable String network,
      List<BindMount> binds,
      Map<String, String> tmpfs,
      @Nullable List<String> command,
      long diskQuotaMB) {

    /** A spec with no bind mounts, no tmpfs and {@code sleep infinity} as its command. */
    public ContainerSpec(String image, String name, Map<String, String> labels, List<String> env, String hostname,
        int cpuCount, long memoryBytes, long pidsLimit, Map<String, String> volumes, @Nullable String network) {
      this(image, name, labels, env, hostname, cpuCount, memoryBytes, pidsLimit, volumes, network, List.of(), Map.of(), null, 0);
    }

    public ContainerSpec withBinds(List<BindMount> binds) {
      return new ContainerSpec(image, name, labels, env, hostname, cpuCount, memoryBytes, pidsLimit, volumes, network,
          List.copyOf(binds), tmpfs, command, diskQuotaMB);
    }

    public ContainerSpec withTmpfs(Map<String, String> tmpfs) {
      return new ContainerSpec(image, name, labels, env, hostname, cpuCount, memoryBytes, pidsLimit, volumes, network,
          binds, Map.copyOf(tmpfs), command, diskQuotaMB);
    }

    public ContainerSpec withCommand(List<String> command) {
      return new ContainerSpec(image, name, labels, env, hostname, cpuCount, memoryBytes, pidsLimit, volumes, network,
          binds, tmpfs, List.copyOf(command), diskQuotaMB);
    }

    /** This spec with one more label. */
    public ContainerSpec withLabel(String key, String value) {
      Map<String, String> more = new java.util.HashMap<>(labels);
      more.put(key, value);
      return new ContainerSpec(image, name, Map.copyOf(more), env, hostname, cpuCount, memoryBytes, pidsLimit, volumes,
          network, binds, tmpfs, command, diskQuotaMB);
    }

    /** This spec with its writable layer held to {@code mb} by the storage driver ({@code --storage-opt size=}). */
    public ContainerSpec withDiskQuotaMB(long mb) {
      return new ContainerSpec(image, name, labels, env, hostname, cpuCount, memoryBytes, pidsLimit, volumes, network,
          binds, tmpfs, command, mb);
    }
  }

  /**
   * The address a container on network {@code none} finds its own hostname at in /etc/hosts, as
   * Debian gives a machine with no permanent address. Docker writes no line for the hostname on
   * {@code none} (on a network it writes {@code <address> <hostname>}), and without one, tools
   * that look their host up ({@code sudo}: "unable to resolve host") complain.
   */
  public static final String NO_NETWORK_HOST_ADDRESS = "127.0.1.1";

  /**
   * Docker 20.10's libnetwork can deadlock when a running container is connected to or
   * disconnected from a network while other containers start or are removed: seen twice on this
   * project's CI machine kind under parallel tests, every container start then waiting in
   * {@code getAllNetworks}/{@code SandboxDestroy} behind a network's lock held by a
   * {@code CreateEndpoint} and an external-key hook, and the engine never answering again. In
   * this JVM, network changes of running containers are therefore made one at a time and never
   * while a container starts or is removed (those still run in parallel with each other).
   */
  private static final java.util.concurrent.locks.ReentrantReadWriteLock NETWORK_CHANGES =
      new java.util.concurrent.locks.ReentrantReadWriteLock(true);

  /**
   * Runs a container start or removal: in parallel with others, never during a network change.
   *
   * @param op the Docker call
   * @return its result
   */
  public static <T> T startingOrRemoving(java.util.function.Supplier<T> op) {
    NETWORK_CHANGES.readLock().lock();
    try {
      return op.get();
    } finally {
      NETWORK_CHANGES.readLock().unlock();
    }
  }

  /**
   * Runs a network connect or disconnect of a running container: alone.
   *
   * @param op the Docker call
   */
  public static void changingNetworks(Runnable op) {
    NETWORK_CHANGES.writeLock().lock();
    try {
      op.run();
    } finally {
      NETWORK_CHANGES.writeLock().unlock();
    }
  }

  /**
   * The capabilities a sandbox's root keeps; every other one is dropped. Docker's default set less
   * {@code NET_RAW} (raw and packet sockets: hand-built packets past a firewall, address and ARP
   * spoofing), {@code MKNOD} and {@code SETPCAP}. What stays is what root in a sandbox does every
   * day: own and read any file, signal and become any user ({@code sudo}, the daemon starting a
   * user's process), bind low ports, {@code chroot}, file capabilities a package sets (held to
   * this set anyway), and the audit record {@code sudo} writes (without it, every sudo prints an
   * error). {@code ping} still works: Docker opens ICMP datagram sockets to every group.
   */
  public static final List<com.github.dockerjava.api.model.Capability> SANDBOX_CAPABILITIES = List.of(
      com.github.dockerjava.api.model.Capability.CHOWN, com.github.dockerjava.api.model.Capability.DAC_OVERRIDE,
      com.github.dockerjava.api.model.Capability.FOWNER, com.github.dockerjava.api.model.Capability.FSETID,
      com.github.dockerjava.api.model.Capability.KILL, com.github.dockerjava.api.model.Capability.SETGID,
      com.github.dockerjava.api.model.Capability.SETUID, com.github.dockerjava.api.model.Capability.SETFCAP,
      com.github.dockerjava.api.model.Capability.NET_BIND_SERVICE, com.github.dockerjava.api.model.Capability.SYS_CHROOT,
      com.github.dockerjava.api.model.Capability.AUDIT_WRITE);

  /** {@code host} with only {@link #SANDBOX_CAPABILITIES}: for sandboxes and template build steps alike. */
  public static HostConfig confined(HostConfig host) {
    return host.withCapDrop(com.github.dockerjava.api.model.Capability.ALL)
        .withCapAdd(SANDBOX_CAPABILITIES.toArray(com.github.dockerjava.api.model.Capability[]::new));
  }

  /**
   * The host-side log of a sandbox's own stdout and stderr (its PID 1's, which root in the sandbox
   * can write to through {@code /proc/1/fd/1}): Docker's json-file log, held to
   * {@link #SANDBOX_LOG_FILES} files of {@link #SANDBOX_LOG_FILE_SIZE} each, so what the sandbox
   * writes there costs the host's disk at most that much. Nothing in the server reads it; it keeps
   * the daemon's own diagnostics for {@code docker logs}.
   */
  public static final String SANDBOX_LOG_FILE_SIZE = "1m";
  /** How many json-file log files a sandbox's container keeps (the current one and one rotated). */
  public static final String SANDBOX_LOG_FILES = "2";
  private static final com.github.dockerjava.api.model.LogConfig SANDBOX_LOG = new com.github.dockerjava.api.model.LogConfig(
      com.github.dockerjava.api.model.LogConfig.LoggingType.JSON_FILE, Map.of("max-size", SANDBOX_LOG_FILE_SIZE, "max-file", SANDBOX_LOG_FILES));

  /**
   * Creates and starts a container with limited CPU, memory and pids, its log capped (see
   * {@link #SANDBOX_LOG_FILE_SIZE}), on the spec's network or,
   * with none given, on network {@code none} (loopback only) with its hostname at
   * {@link #NO_NETWORK_HOST_ADDRESS}.
   */
  public String createAndStart(ContainerSpec spec) {
    HostConfig host = confined(HostConfig.newHostConfig())
        .withNetworkMode(spec.network() == null ? "none" : spec.network())
        .withNanoCPUs(spec.cpuCount() * 1_000_000_000L)
        .withMemory(spec.memoryBytes())
        .withMemorySwap(spec.memoryBytes())
        .withPidsLimit(spec.pidsLimit())
        // a command that is its own init (the daemon's supervisor) is PID 1 itself: nothing in the
        // container can then end it, since the kernel ignores SIGKILL from inside for a namespace's init
        .withInit(!"true".equals(spec.labels().get(LABEL_OWN_INIT)))
        .withRuntime(runtime)
        .withLogConfig(SANDBOX_LOG)
        .withMounts(spec.volumes().entrySet().stream()
            .map(e -> new com.github.dockerjava.api.model.Mount()
                .withType(com.github.dockerjava.api.model.MountType.VOLUME)
                .withSource(e.getKey())
                .withTarget(e.getValue()))
            .toList());
    if (!spec.binds().isEmpty()) {
      host.withBinds(spec.binds().stream()
          .map(b -> new com.github.dockerjava.api.model.Bind(b.hostPath().toString(),
              new com.github.dockerjava.api.model.Volume(b.containerPath()),
              b.readOnly() ? com.github.dockerjava.api.model.AccessMode.ro : com.github.dockerjava.api.model.AccessMode.rw))
          .toList());
    }
    if (!spec.tmpfs().isEmpty()) {
      host.withTmpFs(spec.tmpfs());
    }
    if (spec.network() == null && spec.hostname() != null && !spec.hostname().isEmpty()) {
      host.withExtraHosts(spec.hostname() + ":" + NO_NETWORK_HOST_ADDRESS);
    }
    if (spec.diskQuotaMB() > 0) {
      host.withStorageOpt(Map.of("size", spec.diskQuotaMB() + "M"));
    }
    try (CreateContainerCmd cmd = docker.createContainerCmd(spec.image())) {
      String id = cmd
          .withName(spec.name())
          .withLabels(spec.labels())
          .withEnv(spec.env())
          .withHostName(spec.hostname())
          .withCmd(spec.command() == null ? List.of("sleep", "infinity") : spec.command())
          .withUser("root")
          .withHostConfig(host)
          .exec()
          .getId();
      try {
        startingOrRemoving(() -> docker.startContainerCmd(id).exec());
      } catch (RuntimeException e) {
        remove(id);
        throw e;
      }
      return id;
    }
  }

  /** Removes a container and its anonymous volumes. @return false when it did not exist */
  public boolean remove(String containerId) {
    try {
      startingOrRemoving(() -> docker.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec());
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  public boolean isRunning(String containerId) {
    try {
      Boolean running = docker.inspectContainerCmd(containerId).exec().getState().getRunning();
      return Boolean.TRUE.equals(running);
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** Every container the local runtime made, running or not. */
  public List<Container> listOurs() {
    return docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_OURS, "true")).exec();
  }

  public boolean imageExists(String image) {
    try {
      docker.inspectImageCmd(image).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** Imports a root filesystem tar file as an image ({@code docker import}). */
  public void importImage(java.nio.file.Path rootfsTar, String repository, String tag) throws IOException {
    String query = "/images/create?fromSrc=-&repo=" + java.net.URLEncoder.encode(repository, java.nio.charset.StandardCharsets.UTF_8)
        + "&tag=" + java.net.URLEncoder.encode(tag, java.nio.charset.StandardCharsets.UTF_8);
    String[] answer;
    try (InputStream in = java.nio.file.Files.newInputStream(rootfsTar)) {
      answer = RawExec.post(engine, query, "application/x-tar", in, java.nio.file.Files.size(rootfsTar));
    }
    if (!answer[0].contains(" 200 ") || answer[1].contains("\"error\"")) {
      throw new IOException("docker import failed: " + answer[0] + " " + answer[1].strip());
    }
  }

  /** How to run one exec. */
  public record ExecSpec(List<String> cmd, String user, List<String> env, boolean tty) {}

  /** Creates an exec and attaches to it over a raw, half-closable connection. */
  public RawExec exec(String containerId, ExecSpec spec) throws IOException {
    String execId = afterPauseStateSettles(() -> docker.execCreateCmd(containerId)
        .withCmd(spec.cmd().toArray(String[]::new))
        .withUser(spec.user())
        .withEnv(spec.env())
        .withAttachStdin(true)
        .withAttachStdout(true)
        .withAttachStderr(true)
        .withTty(spec.tty())
        .exec()
        .getId());
    return RawExec.start(engine, execId, spec.tty());
  }

  /** Freezes a container ({@code docker pause}). */
  public void pause(String containerId) {
    afterPauseStateSettles(() -> docker.pauseContainerCmd(containerId).exec());
  }

  /** Thaws a frozen container ({@code docker unpause}). */
  public void unpause(String containerId) {
    afterPauseStateSettles(() -> docker.unpauseContainerCmd(containerId).exec());
  }

  /** How long Docker's view of a container's pause state is given to catch up with the truth. */
  private static final long PAUSE_STATE_SETTLE_NANOS = java.time.Duration.ofSeconds(5).toNanos();

  /**
   * Runs a Docker call, trying it again while Docker refuses it over a pause state that has not
   * settled yet. Docker records a pause or unpause twice: the API call sets the container's state
   * at once, and containerd's matching event, handled later and asynchronously, sets it again. A
   * pause event handled after a quick unpause makes a running container look paused (exec then
   * fails with 409 "is paused") until the unpause event arrives; the reverse happens for a quick
   * pause after an unpause. Conflicts of any other kind, and ones that outlast the window, are
   * thrown as they are.
   */
  private <T> T afterPauseStateSettles(java.util.function.Supplier<T> call) {
    long deadline = System.nanoTime() + PAUSE_STATE_SETTLE_NANOS;
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (ConflictException e) {
        String message = String.valueOf(e.getMessage());
        boolean pauseState = message.contains("is paused") || message.contains("already paused") || message.contains("not paused");
        if (!pauseState || System.nanoTime() - deadline > 0) {
          throw e;
        }
        try {
          Thread.sleep(Math.min(10L * attempt, 100L));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /**
   * The exit code of a finished exec, waiting briefly for Docker to record it.
   *
   * @return the exit code, or null when Docker could not say
   */
  public @Nullable Integer exitCode(String execId) {
    for (int attempt = 0; attempt < 100; attempt++) {
      InspectExecResponse r;
      try {
        r = docker.inspectExecCmd(execId).exec();
      } catch (NotFoundException e) {
        return null;
      }
      if (!Boolean.TRUE.equals(r.isRunning()) && r.getExitCodeLong() != null) {
        return r.getExitCodeLong().intValue();
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    return null;
  }

  /** Result of {@link #run}. */
  public record Completed(@Nullable Integer exitCode, byte[] stdout, byte[] stderr) {
    public String stderrText() {
      return new String(stderr, java.nio.charset.StandardCharsets.UTF_8).strip();
    }

    public String stdoutText() {
      return new String(stdout, java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  /**
   * Runs a command to completion, feeding it {@code stdin} (then EOF) and collecting its output.
   */
  public Completed run(String containerId, String user, List<String> cmd, @Nullable InputStream stdin) throws IOException {
    try (RawExec exec = exec(containerId, new ExecSpec(cmd, user, List.of(), false))) {
      Thread feeder = null;
      if (stdin != null) {
        feeder = Thread.ofVirtual().name("sandboxes-stdin").start(() -> {
          try (stdin) {
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = stdin.read(buf)) >= 0) {
              if (n > 0) {
                exec.write(n == buf.length ? buf : java.util.Arrays.copyOf(buf, n));
              }
            }
          } catch (IOException ignored) {
            // the process stopped reading; its exit code tells what happened
          } finally {
            try {
              exec.closeStdin();
            } catch (IOException ignored) {
              // already closed
            }
          }
        });
      } else {
        exec.closeStdin();
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      RawExec.Frame frame;
      while ((frame = exec.read()) != null) {
        (frame.stream() == RawExec.Stream.STDERR ? err : out).write(frame.data());
      }
      if (feeder != null) {
        try {
          feeder.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          feeder.interrupt();
        }
      }
      return new Completed(exitCode(exec.execId()), out.toByteArray(), err.toByteArray());
    }
  }

  /** Runs a command as root with no input. */
  public Completed runAsRoot(String containerId, String... cmd) throws IOException {
    return run(containerId, "root", new ArrayList<>(List.of(cmd)), null);
  }
}
