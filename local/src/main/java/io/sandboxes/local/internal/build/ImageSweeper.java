package io.sandboxes.local.internal.build;

import static io.sandboxes.local.internal.build.BuildLabels.*;

import io.sandboxes.local.internal.runtime.BuildRuntime;
import io.sandboxes.local.internal.runtime.InUse;
import io.sandboxes.local.internal.runtime.BuildRuntime.Image;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes what builds no longer need: builds no tag points at, a deleted template's images, the
 * step images of a build that did not finish, and what a previous run of this server left. An
 * image the runtime refuses to remove (a child is built on it, a container uses it) stays.
 */
final class ImageSweeper {
  private static final Logger LOG = LoggerFactory.getLogger(ImageSweeper.class);
  private final BuildRuntime runtime;
  private final String serverId;
  private final ReentrantLock registration;
  /** The builds of this server: an unfinished one's {@code uses} are images no sweep removes. */
  private final Collection<Build> builds;
  /** Held while a step's image is taken from the cache, and while images to remove are picked. */
  private final ReentrantLock cacheLock = new ReentrantLock();
  /** Images being removed: the cache does not offer them. */
  private final Set<String> doomed = ConcurrentHashMap.newKeySet();

  ImageSweeper(BuildRuntime runtime, String serverId, ReentrantLock registration, Collection<Build> builds) {
    this.runtime = runtime;
    this.serverId = serverId;
    this.registration = registration;
    this.builds = builds;
  }

  /**
   * The first of a cache lookup's images that no sweep is removing, now one of {@code b}'s uses
   * (so no sweep removes it while {@code b} runs), or null.
   */
  @Nullable String takeFromCache(Build b, java.util.function.Supplier<List<Image>> hits) {
    cacheLock.lock();
    try {
      String hit = hits.get().stream().map(Image::id).filter(i -> !doomed.contains(i)).findFirst().orElse(null);
      if (hit != null) {
        b.uses.add(hit);
      }
      return hit;
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * Removes images (in the order given) except those an unfinished build other than {@code except}
   * goes on from; while they go, the cache does not offer them.
   */
  void removeUnused(List<String> imageIds, @Nullable Build except) {
    List<String> gone = new ArrayList<>();
    cacheLock.lock();
    try {
      Set<String> used = inUse(except);
      imageIds.stream().filter(i -> !used.contains(i)).forEach(gone::add);
      doomed.addAll(gone);
    } finally {
      cacheLock.unlock();
    }
    try {
      removeSteps(gone);
    } finally {
      gone.forEach(doomed::remove);
    }
  }

  /** The images unfinished builds other than {@code except} go on from; under {@link #cacheLock}. */
  private Set<String> inUse(@Nullable Build except) {
    Set<String> used = new HashSet<>();
    builds.stream().filter(o -> o != except && o.finishedAt == null).forEach(o -> used.addAll(o.uses));
    return used;
  }

  /**
   * Removes the step images a previous run of this server left (builds that did not finish) and
   * the builds no tag points at.
   */
  void previousRun() {
    try {
      removeSteps(runtime.images(Map.of(LABEL_STEP_SERVER, serverId), true)
          .stream().sorted(Comparator.comparingLong(Image::created).reversed()).map(Image::id).toList());
    } catch (RuntimeException e) {
      LOG.warn("could not look for the step images a previous run left: {}", e.toString());
    }
    sweepUntagged(null);
  }

  /**
   * Removes the builds of a template (or of every template, for null) that no tag points at. One a
   * sandbox still runs from is held: it is tried again after every sandbox's removal
   * ({@link #sandboxRemoved}), so it goes with the last sandbox that uses it.
   */
  void sweepUntagged(@Nullable String templateId) {
    List<String> gone = new ArrayList<>();
    Set<String> ofTemplates = new HashSet<>();
    registration.lock();
    try {
      List<Image> images = runtime.images(templateId == null ? Map.of(LABEL_OURS, "true") : Map.of(LABEL_TEMPLATE_ID, templateId), true);
      for (Image i : images) {
        Map<String, String> l = i.labels();
        String of = l.getOrDefault(LABEL_TEMPLATE_ID, "");
        Instant made = TemplateCatalogue.parseInstant(l.get(LABEL_TEMPLATE_CREATED));
        // a build just committed gets its tags next, under this lock; the age guards builds of another server on this engine
        boolean settled = templateId != null || made.isBefore(Instant.now().minus(Duration.ofMinutes(1)));
        if (!of.isEmpty() && settled && TemplateCatalogue.isBuild(i) && TemplateCatalogue.registeredTags(i, of).isEmpty()) {
          // held before the removal is tried: a sandbox removed between that try and its answer then tries it again
          held.put(i.id(), of);
          gone.add(i.id());
          ofTemplates.add(of);
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("could not look for template builds no tag points at: {}", e.toString());
      return;
    } finally {
      registration.unlock();
    }
    // an image no tag points at gains none (tags are assigned to tagged builds only), so it is removed outside the lock
    for (String id : gone) {
      if (removeUnlessUsed(id)) {
        held.remove(id);
      } else {
        LOG.info("the earlier build {} stays while a sandbox uses it; it goes after that sandbox", id);
      }
    }
    ofTemplates.forEach(this::removeStepsOf);
  }

  /**
   * The step images only a template's removed builds were made of: the runtime keeps a parent
   * something is built on, so the chain of the build the tags point at stays, as does a held
   * build's and any step a running build took from the cache.
   */
  private void removeStepsOf(String templateId) {
    try {
      removeUnused(stepsOf(templateId), null);
    } catch (RuntimeException e) {
      LOG.warn("could not look for the step images of template {}: {}", templateId, e.toString());
    }
  }

  /** Builds no tag points at that a sandbox used when they were to go: image id to its template's id. */
  private final Map<String, String> held = new ConcurrentHashMap<>();
  private final ReentrantLock retrying = new ReentrantLock();
  /** Set by each sandbox removal; the thread holding {@link #retrying} tries the held builds again while it is set. */
  private final java.util.concurrent.atomic.AtomicBoolean removedSince = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * A sandbox's container was removed: the held builds it may have been the last user of go now
   * (with the step images only they were made of). Removals that come while this runs are not
   * queued one by one: they make the running pass go round once more, so a burst of kills costs one
   * or two passes, and none is missed.
   */
  void sandboxRemoved() {
    if (held.isEmpty()) {
      return;
    }
    removedSince.set(true);
    while (removedSince.get() && retrying.tryLock()) {
      try {
        removedSince.set(false);
        Set<String> ofTemplates = new HashSet<>();
        for (Map.Entry<String, String> h : Map.copyOf(held).entrySet()) {
          if (removeUnlessUsed(h.getKey())) {
            held.remove(h.getKey());
            ofTemplates.add(h.getValue());
            LOG.info("the earlier build {} went after the last sandbox that used it", h.getKey());
          }
        }
        ofTemplates.forEach(this::removeStepsOf);
      } finally {
        retrying.unlock();
      }
    }
  }

  /** A template's step images, newest first: a child before the parent it was committed from. */
  private List<String> stepsOf(String templateId) {
    return runtime.images(Map.of(LABEL_STEP_OF, templateId), true)
        .stream().sorted(Comparator.comparingLong(Image::created).reversed()).map(Image::id).toList();
  }

  /** Rounds of {@link #removeImagesOf}: a container just removed, or a step image's child, may hold an image for a moment. */
  private static final int REMOVAL_ROUNDS = 6;

  /**
   * Removes a deleted template's builds and the step images its builds made that nothing else is
   * built on, in a few rounds a few seconds apart while some remain (what a sandbox or snapshot
   * still uses stays; a restart sweeps again).
   */
  void removeImagesOf(String templateId) {
    try {
      removeImagesInRounds(templateId);
    } finally {
      retryLeftBehind(templateId);
    }
  }

  /**
   * Deleted templates whose step images outlived their rounds: another template's build went on
   * from them (a cached step), so the runtime kept them for that build's sake. They go once that
   * template is deleted too: each later deletion tries them again.
   */
  private final Set<String> leftBehind = ConcurrentHashMap.newKeySet();

  private void retryLeftBehind(String justDeleted) {
    for (String other : List.copyOf(leftBehind)) {
      try {
        List<String> steps = stepsOf(other);
        if (!steps.isEmpty()) {
          removeUnused(steps, null);
        }
        if (stepsOf(other).isEmpty()) {
          leftBehind.remove(other);
        }
      } catch (RuntimeException e) {
        LOG.debug("the step images of deleted template {}, after {} went: {}", other, justDeleted, e.toString());
      }
    }
  }

  private void removeImagesInRounds(String templateId) {
    for (int round = 0; round < REMOVAL_ROUNDS; round++) {
      try {
        List<Image> done = runtime.images(Map.of(LABEL_TEMPLATE_ID, templateId), true).stream().filter(TemplateCatalogue::isBuild)
            .toList();
        // a build running meanwhile may go on from any of them (from the template, or a cached step)
        Set<String> used;
        cacheLock.lock();
        try {
          used = inUse(null);
        } finally {
          cacheLock.unlock();
        }
        done.stream().map(Image::id).filter(i -> !used.contains(i)).forEach(this::removeQuietly);
        List<String> steps = stepsOf(templateId);
        if (done.isEmpty() && steps.isEmpty()) {
          return;
        }
        removeUnused(steps, null);
        Thread.sleep(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.warn("the images of deleted template {} could not be listed: {}", templateId, e.toString());
        return;
      }
    }
    leftBehind.add(templateId);
    LOG.info("some images of deleted template {} stay: a sandbox, a snapshot or another template's build still uses them", templateId);
  }

  /**
   * Removes step images, newest first, leaving any that another image is built on or a container
   * uses (the runtime refuses those without force): they stay as the cache of what uses them.
   */
  void removeSteps(List<String> imageIds) {
    List<String> left = imageIds;
    // creation times are in seconds, so a parent can come before its child: another pass while one removes something
    boolean removedSome = true;
    while (removedSome && !left.isEmpty()) {
      removedSome = false;
      List<String> refused = new ArrayList<>();
      for (String id : left) {
        try {
          runtime.removeImage(id); // false: gone already
          removedSome = true;
        } catch (InUse e) {
          refused.add(id); // still a parent, or in use
        } catch (RuntimeException e) {
          LOG.warn("step image {} could not be removed: {}", id, e.toString());
        }
      }
      left = refused;
    }
  }

  private void removeQuietly(String imageId) {
    if (!removeUnlessUsed(imageId)) {
      LOG.info("the earlier build {} stays while a sandbox uses it", imageId);
    }
  }

  /**
   * Removes an earlier build's image unless a sandbox still runs from it (the newer build is what
   * the name resolves to). @return false when it is in use; true when it went, was gone, or could
   * not be removed for another reason (logged)
   */
  private boolean removeUnlessUsed(String imageId) {
    try {
      runtime.removeImage(imageId); // false: removed already
      return true;
    } catch (InUse e) {
      return false;
    } catch (RuntimeException e) {
      LOG.warn("the earlier build {} could not be removed: {}", imageId, e.toString());
      return true;
    }
  }

  /** Removes the steps a previous run of this server left (it stopped mid-build). */
  void removeLeftoverSteps() {
    try {
      for (String id : runtime.steps(Map.of(LABEL_BUILD_CONTAINER, serverId))) {
        LOG.info("removing template build container {} a previous run left", id);
        runtime.removeStep(id);
      }
    } catch (RuntimeException e) {
      LOG.warn("could not look for template build containers a previous run left: {}", e.toString());
    }
  }
}
