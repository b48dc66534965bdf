package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.build.KnownTemplates;
import io.sandboxes.local.internal.runtime.CapturedImage;
import io.sandboxes.local.internal.runtime.CodeInterpreterTemplate;
import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The templates a sandbox can be created from: {@code base}, {@code code-interpreter-v1} (built
 * from {@code base} the first time it is asked for), and every snapshot. A snapshot is a capture
 * of a sandbox's filesystem as an image ({@code docker commit} on Docker; processes and memory are
 * not captured),
 * labelled with its E2B snapshot id ({@code <name>:default}), which is also its template id.
 */
public final class Templates implements KnownTemplates {
  private static final Logger LOG = LoggerFactory.getLogger(Templates.class);
  static final String REPOSITORY = "sandboxes-local/snapshot";
  static final String LABEL_SNAPSHOT_ID = "io.sandboxes.snapshot-id";
  static final String LABEL_SNAPSHOT_NAME = "io.sandboxes.snapshot-name";
  static final String LABEL_SNAPSHOT_SOURCE = "io.sandboxes.snapshot-sandbox";
  static final String LABEL_SNAPSHOT_CREATED = "io.sandboxes.snapshot-created";
  public static final String BASE = KnownTemplates.BASE;
  private static final Pattern NAME = Pattern.compile("^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$");

  /** A snapshot as E2B describes it. */
  public record Snapshot(String snapshotId, String name, String sourceSandboxId, Instant createdAt, String imageId) {}

  private final SandboxEngine engine;
  private final String baseImage;
  private final ReentrantLock lock = new ReentrantLock();

  /**
   * @param engine the runtime that keeps the images
   * @param baseImage the base template's image
   */
  public Templates(SandboxEngine engine, String baseImage) {
    this.engine = engine;
    this.baseImage = baseImage;
  }

  private volatile java.util.function.Function<String, @Nullable String> built = t -> null;

  private volatile java.util.function.Predicate<String> builtName = n -> false;

  /** Names taken by templates built through the build API: a snapshot may not take one. */
  public void alsoReserve(java.util.function.Predicate<String> builtNames) {
    this.builtName = builtNames;
  }

  private volatile java.util.function.Function<String, @Nullable String> builtId = t -> null;

  /** Names the id of a built template a reference (its name, {@code name:tag}, or its id) stands for. */
  public void alsoIdentify(java.util.function.Function<String, @Nullable String> builtTemplateIds) {
    this.builtId = builtTemplateIds;
  }

  /**
   * @return the id E2B reports as a sandbox's {@code templateID} for the reference it was created
   *     from: a built template's id for its name (the name is then its alias); any other reference as it is
   */
  public String reportedId(String reference) {
    if (BASE.equals(reference) || find(reference).isPresent()) {
      return reference;
    }
    String id = builtId.apply(reference);
    return id == null ? reference : id;
  }

  private volatile Runnable builtAfterRemoval = () -> {};

  /** Also runs, after each sandbox's container is removed, the build API's sweep of builds a sandbox held. */
  public void alsoAfterRemoval(Runnable builtSweep) {
    this.builtAfterRemoval = builtSweep;
  }

  /**
   * A sandbox's container was removed: the superseded snapshot builds and the untagged template
   * builds it may have been the last user of go now.
   */
  public void sandboxRemoved() {
    if (supersededKept) {
      sweepSuperseded();
    }
    builtAfterRemoval.run();
  }

  /** Also resolves templates built through the build API (after base and snapshots). */
  public void alsoResolve(java.util.function.Function<String, @Nullable String> builtTemplates) {
    this.built = builtTemplates;
  }

  /**
   * @return the image of a template id ({@code base}, {@code code-interpreter-v1}, {@code name:default}
   *     or {@code name}, or a built template's id or name), or null
   */
  @Override
  public @Nullable String resolve(String templateId) {
    if (BASE.equals(templateId)) {
      return baseImage;
    }
    if (CodeInterpreterTemplate.ALIASES.contains(templateId)) {
      // built the first time it is asked for (minutes, once per machine); later creates find it
      return engine.ensureCodeInterpreter(baseImage, line -> LOG.info("{}", line));
    }
    return find(templateId).map(Snapshot::imageId).orElseGet(() -> built.apply(templateId));
  }

  /** The canonical snapshot id for a template id: {@code name} and {@code name:default} are the same. */
  static String canonical(String templateId) {
    return templateId.contains(":") ? templateId : templateId + ":default";
  }

  @Override
  public boolean snapshotNamed(String name) {
    return find(name).isPresent();
  }

  public Optional<Snapshot> find(String templateId) {
    String id = canonical(templateId);
    return list().stream().filter(s -> s.snapshotId().equals(id)).findFirst();
  }

  /** @return every snapshot (its newest build), newest first */
  public List<Snapshot> list() {
    Map<String, Snapshot> newest = new java.util.LinkedHashMap<>();
    for (Snapshot s : builds()) {
      newest.putIfAbsent(s.snapshotId(), s);
    }
    return List.copyOf(newest.values());
  }

  /** @return every build of every snapshot, newest first: a name taken again keeps its older builds while sandboxes use them */
  private List<Snapshot> builds() {
    List<CapturedImage> images = engine.images(Map.of(InstanceLabels.OURS, "true"));
    return images.stream()
        .map(Templates::snapshotOf)
        .flatMap(Optional::stream)
        .sorted(Comparator.comparing(Snapshot::createdAt).reversed().thenComparing(Snapshot::snapshotId)
            .thenComparing(Snapshot::imageId))
        .toList();
  }

  /**
   * Whether a superseded build was kept because something used it: {@link #sweepSuperseded()} has
   * work. Written under {@link #lock} only, and turned false only once a whole sweep found nothing
   * kept: a removal that ends while a sweep is under way reads true and sweeps again after it,
   * so a build whose last sandbox went during that sweep (its image still in use when the sweep
   * tried it) is not left behind.
   */
  private volatile boolean supersededKept;

  /**
   * Removes every superseded build (one a later snapshot under the same name replaced) that
   * nothing uses any more; one still used (by a sandbox, running, paused or stopped) stays.
   */
  public void sweepSuperseded() {
    lock.lock();
    try {
      boolean kept = false;
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (Snapshot b : builds()) {
        if (!seen.add(b.snapshotId())) {
          kept |= !removeSuperseded(b);
        }
      }
      supersededKept = kept;
    } catch (RuntimeException e) {
      supersededKept = true;
      LOG.warn("superseded snapshot builds could not be swept: {}", e.toString());
    } finally {
      lock.unlock();
    }
  }

  /** @return whether the build is gone; one kept (in use, or its removal failed) marks a sweep due */
  private boolean removeSuperseded(Snapshot b) {
    SandboxEngine.ImageRemoval r;
    try {
      r = engine.removeImage(b.imageId());
    } catch (RuntimeException e) {
      LOG.warn("the superseded snapshot build {} of {} could not be removed: {}", b.imageId(), b.snapshotId(), e.toString());
      supersededKept = true;
      return false;
    }
    if (r == SandboxEngine.ImageRemoval.IN_USE) {
      supersededKept = true; // a sandbox made from it runs on, or is paused: it goes after them
      return false;
    }
    return true;
  }

  /**
   * The snapshot an image records, if it is one whose labels are whole: an image of ours whose
   * labels are missing or unreadable (left by another version, or half-made) is passed over, so
   * one bad image cannot break every listing.
   */
  private static Optional<Snapshot> snapshotOf(CapturedImage i) {
    Map<String, String> l = i.labels();
    if ( l.get(LABEL_SNAPSHOT_ID) == null || l.get(LABEL_SNAPSHOT_NAME) == null || l.get(LABEL_SNAPSHOT_ID).isEmpty()) {
      return Optional.empty();
    }
    Instant created;
    try {
      created = Instant.parse(l.getOrDefault(LABEL_SNAPSHOT_CREATED, Instant.EPOCH.toString()));
    } catch (java.time.format.DateTimeParseException e) {
      return Optional.empty();
    }
    return Optional.of(new Snapshot(l.get(LABEL_SNAPSHOT_ID), l.get(LABEL_SNAPSHOT_NAME), l.getOrDefault(LABEL_SNAPSHOT_SOURCE, ""),
        created, i.id()));
  }

  /**
   * Captures a sandbox's filesystem. Re-using a name adds a new build to that snapshot, as E2B
   * does: the name (and its id) then stand for the new build, and sandboxes created from an older
   * one keep it (running, paused or stopped) until they are gone; an older build nothing uses is
   * removed at once. The sandbox keeps running.
   */
  public Snapshot snapshot(LocalSandbox sandbox, @Nullable String name, List<LocalSandbox> sandboxes) throws RpcError {
    String n = name == null || name.isBlank() ? Registry.newSandboxId() : name;
    if (!NAME.matcher(n).matches()) {
      throw new RpcError("invalid_argument", "snapshot name must be letters, digits, '_', '.' or '-', got '" + n + "'");
    }
    String snapshotId = n + ":default";
    if (builtName.test(n)) {
      // names are one namespace: the snapshot must not shadow the built template, nor hide behind it
      throw new RpcError("already_exists", "the name '" + n + "' is taken by a built template: delete it first or choose another name");
    }
    lock.lock();
    try {
      List<Snapshot> previous = builds().stream().filter(b -> b.snapshotId().equals(snapshotId)).toList();
      Map<String, String> labels = new HashMap<>();
      labels.put(InstanceLabels.OURS, "true");
      labels.put(LABEL_SNAPSHOT_ID, snapshotId);
      labels.put(LABEL_SNAPSHOT_NAME, n);
      labels.put(LABEL_SNAPSHOT_SOURCE, sandbox.id());
      labels.put(LABEL_SNAPSHOT_CREATED, Instant.now().toString());
      // the committed config must not carry the source sandbox's identity
      labels.put(InstanceLabels.SANDBOX_ID, "");
      labels.put(InstanceLabels.ENVD_TOKEN, "");
      labels.put(WarmPool.LABEL_POOL, "");
      // nor the built template's, when the sandbox was made from one: the snapshot is no build of it
      for (String l : List.of(io.sandboxes.local.internal.build.BuildLabels.LABEL_TEMPLATE_ID, io.sandboxes.local.internal.build.BuildLabels.LABEL_TEMPLATE_NAME, io.sandboxes.local.internal.build.BuildLabels.LABEL_TEMPLATE_BUILD,
          io.sandboxes.local.internal.build.BuildLabels.LABEL_TEMPLATE_CREATED, io.sandboxes.local.internal.build.BuildLabels.LABEL_TEMPLATE_DEFAULTS, io.sandboxes.local.internal.build.BuildLabels.LABEL_BUILT_BY)) {
        labels.put(l, "");
      }
      String tag = Registry.newSandboxId();
      String imageId;
      // the capture freezes the container: it is a transition, so no docker exec of the metrics
      // sampler (df) starts meanwhile; an exec whose runc init is frozen midway deadlocked the
      // container in Docker 20.10 (seen here: every later call on it, and every image removal
      // on the engine, hung)
      sandbox.transitions.lock();
      try {
        imageId = engine.capture(sandbox.instanceId(), REPOSITORY, tag, labels, !sandbox.paused());
      } catch (RuntimeException e) {
        throw new RpcError("internal", "capturing sandbox " + sandbox.id() + " failed: " + e.getMessage());
      } finally {
        sandbox.transitions.unlock();
      }
      previous.forEach(this::removeSuperseded);
      StructuredLog.atInfo(LOG).addKeyValue("event", "snapshot.created").addKeyValue("snapshot", snapshotId)
          .addKeyValue("sandbox", sandbox.id()).addKeyValue("image", imageId).log("snapshot taken");
      return new Snapshot(snapshotId, n, sandbox.id(), Instant.parse(labels.get(LABEL_SNAPSHOT_CREATED)), imageId);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Deletes a snapshot template.
   *
   * @return false when there is no such template
   * @throws RpcError when a sandbox, running or paused, was created from it
   */
  public boolean delete(String templateId, List<LocalSandbox> sandboxes) throws RpcError {
    if (BASE.equals(templateId)) {
      throw new RpcError("permission_denied", "the base template cannot be deleted");
    }
    lock.lock();
    try {
      String id = canonical(templateId);
      List<Snapshot> all = builds().stream().filter(b -> b.snapshotId().equals(id)).toList();
      if (all.isEmpty()) {
        return false;
      }
      refuseIfUsed(id, sandboxes, "delete");
      boolean removed = false;
      for (Snapshot b : all) { // every build: no sandbox made from any of them is left
        try {
          removed |= engine.discardImage(b.imageId());
        } catch (InUse e) {
          throw new RpcError("already_exists", "template " + templateId + " is in use: " + e.getMessage());
        }
      }
      return removed;
    } finally {
      lock.unlock();
    }
  }

  private static void refuseIfUsed(String snapshotId, List<LocalSandbox> sandboxes, String verb) throws RpcError {
    for (LocalSandbox s : sandboxes) {
      if (canonical(s.templateId()).equals(snapshotId)) {
        throw new RpcError("already_exists", "cannot " + verb + " template " + snapshotId + ": sandbox " + s.id()
            + " (" + (s.paused() ? "paused" : "running") + ") was created from it");
      }
    }
  }
}
