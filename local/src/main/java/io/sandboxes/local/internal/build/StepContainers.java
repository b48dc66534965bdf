package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Image;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The step runner and its cache: a RUN, WORKDIR or COPY step runs as a container from the
 * previous step's image, its output streamed to the build's log, and is committed to an image
 * labelled with the step's cache key; a step whose key an image carries already is found instead
 * of run.
 */
final class StepContainers {
  private final DockerRuntime docker;
  private final ImageSweeper sweeper;
  private final String serverId;
  private final String buildNetwork;
  private final Set<String> sandboxLabels;
  /** Held while a step's image is looked up in the cache, and while a failed build picks the images it removes. */
  private final java.util.concurrent.locks.ReentrantLock cacheLock = new java.util.concurrent.locks.ReentrantLock();
  /** Step images a failed build is removing: the cache does not offer them. */
  private final Set<String> doomed = ConcurrentHashMap.newKeySet();

  StepContainers(DockerRuntime docker, ImageSweeper sweeper, String serverId, String buildNetwork, Set<String> sandboxLabels) {
    this.docker = docker;
    this.sweeper = sweeper;
    this.serverId = serverId;
    this.buildNetwork = buildNetwork;
    this.sandboxLabels = sandboxLabels;
  }

  static String cacheKey(BuildState st, String type, List<String> args, @Nullable String hash) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update((st.image + "\n" + st.describe() + "\n" + type + "\n" + String.join("\u0000", args) + "\n" + hash)
          .getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A step's image found by its key, now one of the build's uses; none that a failed build is removing. */
  private @Nullable String cached(Build b, String key) {
    cacheLock.lock();
    try {
      // a step's image is the parent of the next one's: only a listing of all images shows it
      List<Image> hits = docker.client().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_CACHE_KEY, key)).exec();
      Optional<String> hit = hits.stream().map(Image::getId).filter(i -> !doomed.contains(i)).findFirst();
      hit.ifPresent(b.uses::add);
      return hit.orElse(null);
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * Removes the step images a build that did not finish committed, newest first, except those a
   * build still running goes on from: what it committed is no template's cache.
   */
  void discard(Build b, Collection<Build> all) {
    List<String> gone = new ArrayList<>();
    cacheLock.lock();
    try {
      Set<String> used = new java.util.HashSet<>();
      all.stream().filter(o -> o != b && o.finishedAt == null).forEach(o -> used.addAll(o.uses));
      b.committed.reversed().stream().filter(i -> !used.contains(i)).forEach(gone::add);
      doomed.addAll(gone);
    } finally {
      cacheLock.unlock();
    }
    try {
      sweeper.removeSteps(gone);
    } finally {
      gone.forEach(doomed::remove);
    }
  }

  /** The labels every image and container of a build carries, blanking what a base image may have passed on. */
  Map<String, String> neutralLabels() {
    Map<String, String> l = new HashMap<>();
    sandboxLabels.forEach(k -> l.put(k, ""));
    l.put(LABEL_TEMPLATE_ID, "");
    l.put(LABEL_TEMPLATE_NAME, "");
    l.put(LABEL_TEMPLATE_DEFAULTS, "");
    l.put(LABEL_CACHE_KEY, "");
    // a committed image must not carry its step container's server: a sandbox created from it would pass for a build leftover
    l.put(LABEL_BUILD_CONTAINER, "");
    l.put(LABEL_STEP_OF, "");
    l.put(LABEL_STEP_SERVER, "");
    l.put(LABEL_BUILT_BY, "");
    l.put(LABEL_TEMPLATE_BUILD, "");
    l.put(LABEL_TEMPLATE_RESOURCES, "");
    return l;
  }

  String createContainer(Build b, BuildState st, List<String> cmd, String user, String workdir) {
    Map<String, String> labels = neutralLabels();
    labels.put(LABEL_BUILD_CONTAINER, serverId);
    List<String> env = new ArrayList<>();
    st.env.forEach((k, v) -> env.add(k + "=" + v));
    HostConfig host = DockerRuntime.confined(HostConfig.newHostConfig())
        .withNetworkMode(buildNetwork)
        .withNanoCPUs(b.request.cpuCount() * 1_000_000_000L)
        .withMemory(b.request.memoryMB() * 1024L * 1024L)
        .withPidsLimit(4096L)
        .withInit(true)
        .withRuntime(docker.runtime()) // a RUN step is as hostile as a sandbox: same runtime (gVisor when chosen)
        // what a step prints is read through an attach (see runContainer), never from a log on the host's disk
        .withLogConfig(new com.github.dockerjava.api.model.LogConfig(com.github.dockerjava.api.model.LogConfig.LoggingType.NONE));
    try (CreateContainerCmd c = docker.client().createContainerCmd(st.image)) {
      String id = c.withLabels(labels).withEnv(env).withUser(user).withWorkingDir(workdir).withCmd(cmd).withEntrypoint(List.of())
          .withHostConfig(host).exec().getId();
      b.containers.add(id);
      return id;
    }
  }

  /**
   * Runs one step as a container from the state's image (or finds its image in the cache),
   * streaming its output to the build log, and makes its committed image the state's.
   */
  void runContainer(Build b, BuildState st, String name, List<String> cmd, String user, String workdir,
      java.util.function.@Nullable Consumer<String> beforeStart, Instant deadline, String key, boolean force)
      throws StepFailed, InterruptedException {
    if (!force) {
      String hit = cached(b, key);
      if (hit != null) {
        b.log("info", "[" + name + "] CACHED", name);
        st.image = hit;
        return;
      }
    }
    String id;
    try {
      id = createContainer(b, st, cmd, user, workdir);
    } catch (RuntimeException e) {
      throw new StepFailed(name, "the step's container could not be created: " + e.getMessage());
    }
    if (beforeStart != null) {
      beforeStart.accept(id);
    }
    ResultCallback.Adapter<Frame> logs = null;
    try {
      // attached before the start, so every byte it prints comes here (the container logs nothing on the host); a step
      // printing faster than its log takes it is held back by the attach, never buffered without bound
      logs = attachOutput(b, name, id);
      DockerRuntime.startingOrRemoving(() -> docker.client().startContainerCmd(id).exec());
      long left = Math.max(1, Duration.between(Instant.now(), deadline).toSeconds());
      Integer code = docker.client().waitContainerCmd(id).exec(new com.github.dockerjava.api.command.WaitContainerResultCallback())
          .awaitStatusCode(left, TimeUnit.SECONDS);
      logs.awaitCompletion(10, TimeUnit.SECONDS);
      if (code == null) {
        throw new StepFailed(name, "step " + name + " did not report an exit code");
      }
      if (code != 0) {
        throw new StepFailed(name, "step " + name + " failed with exit code " + code);
      }
      Map<String, String> labels = neutralLabels();
      labels.put(LABEL_CACHE_KEY, key);
      labels.put(LABEL_STEP_OF, b.request.templateId());
      labels.put(LABEL_STEP_SERVER, serverId);
      st.image = docker.client().commitCmd(id).withLabels(labels).exec();
      b.committed.add(st.image);
      b.uses.add(st.image);
    } catch (com.github.dockerjava.api.exception.DockerClientException e) {
      throw new StepFailed(name, "step " + name + " did not finish within the build's limit of " + TemplateService.BUILD_LIMIT.toMinutes() + " minutes");
    } catch (RuntimeException e) {
      throw new StepFailed(name, "step " + name + " could not run: " + e.getMessage());
    } finally {
      if (logs != null) {
        try {
          logs.close();
        } catch (IOException ignored) {
          // the container goes next
        }
      }
      docker.remove(id);
      b.containers.remove(id);
    }
  }

  /** How long an attach to a step's container may take to be answered. */
  private static final Duration ATTACHED = Duration.ofSeconds(30);

  /**
   * Attaches to a created step container's stdout and stderr, each line going to the build's log
   * (which keeps a bounded part of them), and returns once Docker has answered the attach.
   */
  private ResultCallback.Adapter<Frame> attachOutput(Build b, String name, String id) throws StepFailed, InterruptedException {
    java.util.concurrent.CountDownLatch attached = new java.util.concurrent.CountDownLatch(1);
    ResultCallback.Adapter<Frame> out = docker.client().attachContainerCmd(id).withFollowStream(true).withStdOut(true).withStdErr(true)
        .exec(new ResultCallback.Adapter<Frame>() {
          private final StringBuilder partial = new StringBuilder();
          private String partialLevel = "info";

          @Override
          public void onStart(java.io.Closeable stream) {
            super.onStart(stream);
            attached.countDown();
          }

          @Override
          public void onNext(Frame f) {
            String text = new String(f.getPayload(), StandardCharsets.UTF_8);
            String level = f.getStreamType() == com.github.dockerjava.api.model.StreamType.STDERR ? "warn" : "info";
            if (!level.equals(partialLevel) && !partial.isEmpty()) {
              b.output(partialLevel, partial.toString(), name);
              partial.setLength(0);
            }
            partialLevel = level;
            int from = 0;
            int nl;
            while ((nl = text.indexOf('\n', from)) >= 0) {
              partial.append(text, from, nl);
              b.output(level, partial.toString(), name);
              partial.setLength(0);
              from = nl + 1;
            }
            partial.append(text, from, text.length());
            if (partial.length() > BuildLog.MAX_LINE) {
              b.output(level, partial.toString(), name);
              partial.setLength(0);
            }
          }

          @Override
          public void onError(Throwable t) {
            attached.countDown();
            super.onError(t);
          }

          @Override
          public void onComplete() {
            attached.countDown();
            if (!partial.isEmpty()) {
              b.output(partialLevel, partial.toString(), name);
            }
            super.onComplete();
          }
        });
    if (!attached.await(ATTACHED.toSeconds(), TimeUnit.SECONDS)) {
      throw new StepFailed(name, "step " + name + ": Docker did not answer the attach to its container within " + ATTACHED.toSeconds()
          + " s");
    }
    return out;
  }
}
