package io.sandboxes.local.internal;

import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local runtime's sandboxes: creation from a template, lookup, listing, deadlines and kill.
 * A reaper kills each sandbox when its deadline passes, as E2B's control plane does.
 */
public final class Registry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  /** Resources of every local sandbox. */
  public static final int CPU_COUNT = 2;
  public static final int MEMORY_MB = 1024;
  public static final int DISK_SIZE_MB = 0;
  public static final long PIDS_LIMIT = 1024;
  public static final String ENVD_VERSION = "0.6.13";

  private final DockerRuntime docker;
  private final Map<String, String> templates;
  private final String serverId;
  private final ConcurrentMap<String, LocalSandbox> sandboxes = new ConcurrentHashMap<>();
  private final Thread reaper;

  /**
   * @param templates template id to image reference
   */
  public Registry(DockerRuntime docker, Map<String, String> templates, String serverId) {
    this.docker = docker;
    this.templates = Map.copyOf(templates);
    this.serverId = serverId;
    this.reaper = Thread.ofVirtual().name("sandboxes-reaper").start(this::reap);
  }

  public static String newSandboxId() {
    char[] id = new char[20];
    for (int i = 0; i < id.length; i++) {
      id[i] = ID_ALPHABET[RANDOM.nextInt(ID_ALPHABET.length)];
    }
    return new String(id);
  }

  public static String newToken() {
    byte[] b = new byte[24];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  public boolean hasTemplate(String templateId) {
    return templates.containsKey(templateId);
  }

  /** Creates and starts a sandbox from a template. */
  public LocalSandbox create(String templateId, Duration timeout, Map<String, String> metadata, Map<String, String> envVars) throws RpcError {
    String image = templates.get(templateId);
    if (image == null) {
      throw new RpcError("not_found", "template '" + templateId + "' not found");
    }
    String id = newSandboxId();
    String token = newToken();
    Instant started = Instant.now();
    Instant end = started.plus(timeout);
    Map<String, String> labels = new HashMap<>();
    labels.put(DockerRuntime.LABEL_OURS, "true");
    labels.put(DockerRuntime.LABEL_SANDBOX_ID, id);
    labels.put(DockerRuntime.LABEL_TEMPLATE, templateId);
    labels.put(DockerRuntime.LABEL_METADATA, Json.string(Json.toObject(metadata)));
    labels.put(DockerRuntime.LABEL_DEADLINE, end.toString());
    labels.put(DockerRuntime.LABEL_STARTED, started.toString());
    labels.put(DockerRuntime.LABEL_ENVD_TOKEN, token);
    labels.put(DockerRuntime.LABEL_SERVER, serverId);
    List<String> env = new ArrayList<>();
    envVars.forEach((k, v) -> env.add(k + "=" + v));
    String containerId;
    try {
      containerId = docker.createAndStart(new DockerRuntime.ContainerSpec(
          image, "sandboxes-" + id, labels, env, id, CPU_COUNT, MEMORY_MB * 1024L * 1024L, PIDS_LIMIT));
    } catch (RuntimeException e) {
      LOG.warn("creating a sandbox from {} failed: {}", image, e.toString());
      throw new RpcError("internal", "the sandbox container could not be created: " + e.getMessage());
    }
    LocalSandbox sandbox = new LocalSandbox(id, containerId, templateId, token, metadata, envVars, started, end,
        CPU_COUNT, MEMORY_MB, docker);
    sandboxes.put(id, sandbox);
    LOG.info("sandbox {} created from template {} (container {}), ends at {}", id, templateId, containerId.substring(0, 12), end);
    return sandbox;
  }

  public Optional<LocalSandbox> find(String id) {
    return Optional.ofNullable(sandboxes.get(id));
  }

  /** @return the sandboxes, newest first */
  public List<LocalSandbox> list() {
    List<LocalSandbox> all = new ArrayList<>(sandboxes.values());
    all.sort(Comparator.comparing(LocalSandbox::startedAt).reversed().thenComparing(LocalSandbox::id));
    return all;
  }

  /** The sandbox whose token signed a pre-signed URL, if any. */
  public Optional<LocalSandbox> bySignature(java.util.function.Predicate<LocalSandbox> signedBy) {
    return sandboxes.values().stream().filter(signedBy).findFirst();
  }

  /** @return false when there was no such sandbox */
  public boolean kill(String id) {
    LocalSandbox s = sandboxes.remove(id);
    if (s == null) {
      return false;
    }
    docker.remove(s.containerId());
    LOG.info("sandbox {} killed", id);
    return true;
  }

  /** Sets the deadline to now + timeout; with {@code extendOnly} it never moves earlier. */
  public void setTimeout(LocalSandbox s, Duration timeout, boolean extendOnly) {
    Instant end = Instant.now().plus(timeout);
    if (extendOnly && end.isBefore(s.endAt())) {
      return;
    }
    s.endAt(end);
  }

  private void reap() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        Thread.sleep(Duration.ofMillis(500));
      } catch (InterruptedException e) {
        return;
      }
      Instant now = Instant.now();
      for (LocalSandbox s : List.copyOf(sandboxes.values())) {
        if (!s.endAt().isAfter(now)) {
          LOG.info("sandbox {} reached its deadline", s.id());
          try {
            kill(s.id());
          } catch (RuntimeException e) {
            LOG.warn("killing expired sandbox {} failed: {}", s.id(), e.toString());
          }
        }
      }
    }
  }

  /** Stops the reaper; with {@code killSandboxes} also removes every sandbox this server made. */
  public void close(boolean killSandboxes) {
    reaper.interrupt();
    try {
      reaper.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (killSandboxes) {
      for (String id : List.copyOf(sandboxes.keySet())) {
        try {
          kill(id);
        } catch (RuntimeException e) {
          LOG.warn("removing sandbox {} at shutdown failed: {}", id, e.toString());
        }
      }
    }
  }

  @Override
  public void close() {
    close(true);
  }
}
