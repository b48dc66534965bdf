package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;

import io.sandboxes.local.internal.runtime.BuildRuntime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The step runner and its cache: a RUN, WORKDIR or COPY step runs in the runtime from the
 * previous step's image, its output streamed to the build's log, and is committed to an image
 * labelled with the step's cache key; a step whose key an image carries already is found instead
 * of run.
 */
final class StepRunner {
  private final BuildRuntime runtime;
  private final ImageSweeper sweeper;
  private final String serverId;
  private final Set<String> sandboxLabels;
  StepRunner(BuildRuntime runtime, ImageSweeper sweeper, String serverId, Set<String> sandboxLabels) {
    this.runtime = runtime;
    this.sweeper = sweeper;
    this.serverId = serverId;
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

  /** A step's image found by its key, now one of the build's uses; none that a sweep is removing. */
  private @Nullable String cached(Build b, String key) {
    // a step's image is the parent of the next one's: only a listing of all images shows it
    return sweeper.takeFromCache(b, () -> runtime.images(Map.of(LABEL_CACHE_KEY, key), true));
  }

  /**
   * Removes the step images a build that did not finish committed, newest first, except those a
   * build still running goes on from: what it committed is no template's cache.
   */
  void discard(Build b) {
    sweeper.removeUnused(b.committed.reversed(), b);
  }

  /** The labels every image and step of a build carries, blanking what a base image may have passed on. */
  Map<String, String> neutralLabels() {
    Map<String, String> l = new HashMap<>();
    sandboxLabels.forEach(k -> l.put(k, ""));
    l.put(LABEL_TEMPLATE_ID, "");
    l.put(LABEL_TEMPLATE_NAME, "");
    l.put(LABEL_TEMPLATE_DEFAULTS, "");
    l.put(LABEL_CACHE_KEY, "");
    // a committed image must not carry its step's server: a sandbox created from it would pass for a build leftover
    l.put(LABEL_BUILD_CONTAINER, "");
    l.put(LABEL_STEP_OF, "");
    l.put(LABEL_STEP_SERVER, "");
    l.put(LABEL_BUILT_BY, "");
    l.put(LABEL_TEMPLATE_BUILD, "");
    l.put(LABEL_TEMPLATE_RESOURCES, "");
    return l;
  }

  /** Creates a build's step (not yet started) from the state's image, with the build's resources, as one of the build's. */
  String createStep(Build b, BuildState st, List<String> cmd, String user, String workdir) {
    Map<String, String> labels = neutralLabels();
    labels.put(LABEL_BUILD_CONTAINER, serverId);
    List<String> env = new ArrayList<>();
    st.env.forEach((k, v) -> env.add(k + "=" + v));
    String id = runtime.createStep(new BuildRuntime.StepSpec(st.image, labels, env, user, workdir, cmd, b.request.cpuCount(),
        b.request.memoryMB()));
    b.steps.add(id);
    return id;
  }

  /**
   * A step as its log lines name it: {@code step} its entries' step ("1", "2", …), {@code prefix}
   * its lines' prefix ({@link BuildLines#step}) and {@code text} its heading's text.
   */
  record Heading(String step, String prefix, String text) {}

  /**
   * Runs one step from the state's image (or finds its image in the cache), logging its heading
   * (CACHED when found), streaming its output to the build log, and makes its committed image the
   * state's.
   */
  void runStep(Build b, BuildState st, Heading h, List<String> cmd, String user, String workdir,
      java.util.function.@Nullable Consumer<String> beforeStart, Instant deadline, String key, boolean force)
      throws StepFailed, InterruptedException {
    String name = h.step();
    if (!force) {
      String hit = cached(b, key);
      if (hit != null) {
        b.log("info", BuildLines.heading(true, h.prefix(), h.text(), key), name);
        st.image = hit;
        return;
      }
    }
    b.log("info", BuildLines.heading(false, h.prefix(), h.text(), key), name);
    String id;
    try {
      id = createStep(b, st, cmd, user, workdir);
    } catch (RuntimeException e) {
      throw new StepFailed(name, "the step's container could not be created: " + e.getMessage());
    }
    if (beforeStart != null) {
      beforeStart.accept(id);
    }
    BuildRuntime.Attachment logs = null;
    try {
      // attached before the start, so every byte it prints comes here (the step logs nothing on the host); a step
      // printing faster than its log takes it is held back by the attach, never buffered without bound
      logs = attachOutput(b, h, id);
      runtime.start(id);
      long left = Math.max(1, Duration.between(Instant.now(), deadline).toSeconds());
      Integer code = runtime.awaitExit(id, Duration.ofSeconds(left));
      logs.awaitEnd(Duration.ofSeconds(10));
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
      st.image = runtime.commit(id, labels);
      b.committed.add(st.image);
      b.uses.add(st.image);
    } catch (BuildRuntime.Unfinished e) {
      throw new StepFailed(name, "step " + name + " did not finish within the build's limit of " + TemplateService.BUILD_LIMIT.toMinutes()
          + " minutes");
    } catch (RuntimeException e) {
      // the runtime refuses to start a container as a user its image does not have
      boolean unknownUser = String.valueOf(e.getMessage()).contains("unable to find user " + user + ":");
      throw new StepFailed(name, "step " + name + " could not run: " + e.getMessage(), unknownUser);
    } finally {
      if (logs != null) {
        try {
          logs.close();
        } catch (IOException ignored) {
          // the step goes next
        }
      }
      runtime.removeStep(id);
      b.steps.remove(id);
    }
  }

  /** How long an attach to a step may take to be answered. */
  private static final Duration ATTACHED = Duration.ofSeconds(30);

  /**
   * Attaches to a created step's stdout and stderr, each line going to the build's log
   * (which keeps a bounded part of them), and returns once the runtime has answered the attach.
   */
  private BuildRuntime.Attachment attachOutput(Build b, Heading h, String id) throws StepFailed, InterruptedException {
    String name = h.step();
    BuildRuntime.Attachment out = runtime.attach(id, new Lines(b, h));
    if (!out.awaitAttached(ATTACHED)) {
      throw new StepFailed(name, "step " + name + ": Docker did not answer the attach to its container within " + ATTACHED.toSeconds()
          + " s");
    }
    return out;
  }

  /**
   * A step's output cut into lines for the build's log, each as E2B prints a command's line
   * ({@link BuildLines#output}: its stream named, trimmed, blank ones left out), at level info for
   * both streams as E2B's; a line too long is cut at the log's limit.
   */
  private static final class Lines implements BuildRuntime.Output {
    private final Build b;
    private final Heading h;
    private final StringBuilder partial = new StringBuilder();
    private boolean partialStderr;

    Lines(Build b, Heading h) {
      this.b = b;
      this.h = h;
    }

    private void emit(boolean stderr) {
      String line = BuildLines.output(h.prefix(), stderr, partial.toString());
      partial.setLength(0);
      if (line != null) {
        b.output("info", line, h.step());
      }
    }

    @Override
    public void chunk(byte[] bytes, boolean stderr) {
      String text = new String(bytes, StandardCharsets.UTF_8);
      if (stderr != partialStderr && !partial.isEmpty()) {
        emit(partialStderr);
      }
      partialStderr = stderr;
      int from = 0;
      int nl;
      while ((nl = text.indexOf('\n', from)) >= 0) {
        partial.append(text, from, nl);
        emit(stderr);
        from = nl + 1;
      }
      partial.append(text, from, text.length());
      if (partial.length() > BuildLog.MAX_LINE) {
        emit(stderr);
      }
    }

    @Override
    public void end() {
      if (!partial.isEmpty()) {
        emit(partialStderr);
      }
    }
  }
}
