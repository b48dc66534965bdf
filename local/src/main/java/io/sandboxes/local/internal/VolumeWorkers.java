package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.runtime.Instance;
import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.runtime.InstanceSpec;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The helpers the volume content API works through: for a volume read or written without a
 * sandbox, an instance of the base image with only that volume mounted (at {@link #MOUNT}), no
 * network, small limits and the in-sandbox daemon, so every path is resolved inside it and never
 * on the host. Started on the first call for a volume, stopped after {@link #IDLE} without one,
 * before the volume is deleted, and with the server; a server's start removes helpers an earlier
 * run of it left. Not sandboxes: they are not listed, have no token and hold nothing else.
 */
public final class VolumeWorkers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeWorkers.class);
  /** Where the volume is mounted in its helper. */
  public static final String MOUNT = "/volume";
  /** The label marking a helper, its value the volume's id. */
  public static final String LABEL = "io.sandboxes.volume-helper";
  private static final Duration IDLE = Duration.ofSeconds(60);

  private record Worker(String instanceId, SandboxDaemon daemon, long[] lastUse, java.util.concurrent.atomic.AtomicInteger busy) {}

  /** A call on a helper's daemon. */
  public interface Call<T> {
    T run(DaemonConnection daemon) throws RpcError, IOException;
  }

  private final SandboxEngine engine;
  private final String image;
  private final String serverId;
  private final Map<String, Worker> workers = new ConcurrentHashMap<>();
  private final Map<String, Object> locks = new ConcurrentHashMap<>();
  private final ScheduledExecutorService idle = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "sandboxes-volume-helpers");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param image the image helpers run (the base template's: it has the tools the content calls use)
   */
  public VolumeWorkers(SandboxEngine engine, String image, String serverId) {
    this.engine = engine;
    this.image = image;
    this.serverId = serverId;
    for (Instance left : engine.instances(Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId))) {
      if (left.labels().containsKey(LABEL)) {
        engine.remove(left.id());
        engine.discardDaemon(left.labels());
      }
    }
    idle.scheduleWithFixedDelay(this::stopIdle, 10, 10, TimeUnit.SECONDS);
  }

  /**
   * Runs a call on the daemon of the volume's helper, started when there is none; a helper is not
   * stopped for idleness while a call runs on it.
   *
   * @throws RpcError when it cannot be started or reached, or as the call throws
   */
  public <T> T with(String volumeId, Call<T> call) throws RpcError, IOException {
    Worker w;
    synchronized (locks.computeIfAbsent(volumeId, k -> new Object())) {
      w = workers.get(volumeId);
      if (w == null) {
        w = start(volumeId);
        workers.put(volumeId, w);
      }
      w.busy().incrementAndGet();
    }
    try {
      return call.run(w.daemon().connection());
    } finally {
      w.lastUse()[0] = System.nanoTime();
      w.busy().decrementAndGet();
    }
  }

  /** Stops the volume's helper, if it has one (before the volume is deleted). */
  public void release(String volumeId) {
    synchronized (locks.computeIfAbsent(volumeId, k -> new Object())) {
      Worker w = workers.remove(volumeId);
      if (w != null) {
        stop(w);
      }
    }
  }

  private Worker start(String volumeId) throws RpcError {
    String name = "volume-" + Registry.newSandboxId();
    SandboxDaemon daemon;
    try {
      daemon = new SandboxDaemon(engine.openDaemon(name));
    } catch (IOException e) {
      throw new RpcError("internal", "the volume helper's daemon socket could not be made: " + e.getMessage());
    }
    Map<String, String> labels = new HashMap<>(daemon.link().labels());
    labels.put(InstanceLabels.OURS, "true");
    labels.put(InstanceLabels.SERVER, serverId);
    labels.put(LABEL, volumeId);
    String instanceId = null;
    try {
      instanceId = engine.launch(new InstanceSpec(image, "sandboxes-" + name, labels, List.of(), "volume", 1, 256L * 1024 * 1024, 64,
          Map.of(volumeId, MOUNT), null, 0), daemon.link());
      daemon.awaitConnected(SandboxDaemon.CONNECT);
    } catch (RuntimeException | IOException | TimeoutException e) {
      if (instanceId != null) {
        engine.remove(instanceId);
      }
      daemon.delete();
      throw new RpcError("internal", "the volume helper could not be started: " + e.getMessage());
    }
    StructuredLog.atInfo(LOG).addKeyValue("event", "volume.helper-started").addKeyValue("volume", volumeId)
        .addKeyValue("instance", instanceId.substring(0, Math.min(12, instanceId.length()))).log("volume helper started");
    return new Worker(instanceId, daemon, new long[] {System.nanoTime()}, new java.util.concurrent.atomic.AtomicInteger());
  }

  private void stopIdle() {
    for (String volumeId : List.copyOf(workers.keySet())) {
      synchronized (locks.computeIfAbsent(volumeId, k -> new Object())) {
        Worker w = workers.get(volumeId);
        if (w != null && w.busy().get() == 0 && System.nanoTime() - w.lastUse()[0] > IDLE.toNanos()) {
          workers.remove(volumeId);
          stop(w);
        }
      }
    }
  }

  private void stop(Worker w) {
    try {
      engine.remove(w.instanceId());
    } catch (RuntimeException e) {
      LOG.warn("removing a volume helper failed: {}", e.toString());
    }
    w.daemon().delete();
  }

  /** Stops every helper. */
  @Override
  public void close() {
    idle.shutdownNow();
    for (String volumeId : List.copyOf(workers.keySet())) {
      release(volumeId);
    }
  }
}
