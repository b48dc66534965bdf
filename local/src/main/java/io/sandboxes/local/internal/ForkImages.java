package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.runtime.CapturedImage;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The captured filesystems forks start from: which sandbox was made from which, which are still
 * needed by forks being started, and their removal once nothing uses them.
 */
final class ForkImages {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final SandboxEngine engine;
  private final String serverId;
  /** Sandbox id to the fork image its container was made from, for forks only. */
  private final ConcurrentMap<String, String> bySandbox = new ConcurrentHashMap<>();
  /** Fork images whose forks are still being started: not to be removed yet. */
  private final Set<String> inUse = ConcurrentHashMap.newKeySet();

  ForkImages(SandboxEngine engine, String serverId) {
    this.engine = engine;
    this.serverId = serverId;
  }

  /** Remembers the fork image a sandbox was made from; nothing for a sandbox that is no fork. */
  void track(String sandboxId, @Nullable String image) {
    if (image != null && !image.isEmpty()) {
      bySandbox.put(sandboxId, image);
    }
  }

  /** A sandbox is gone: the image it was made from goes too when nothing else uses it. */
  void sandboxGone(String sandboxId) {
    release(bySandbox.remove(sandboxId));
  }

  /** Keeps an image while its forks are being started. */
  void hold(String image) {
    inUse.add(image);
  }

  /** The forks of an image are started: it goes when no fork was made from it. */
  void unhold(String image) {
    inUse.remove(image);
    release(image);
  }

  /**
   * Removes a fork image when nothing uses it any more: no fork still being started, no
   * container (Docker refuses the removal of an image a container uses, and that refusal is
   * the answer), no image made on top of it. One at a time: the removals of forks killed together
   * run at once, and two removals of one image that each see the other's fork still there would
   * both be refused, leaving it.
   */
  synchronized void release(@Nullable String image) {
    if (image == null || image.isEmpty() || inUse.contains(image)) {
      return;
    }
    try {
      // still used by another fork, or already gone: it stays, or there is nothing to do
      if (engine.removeImage(image) == SandboxEngine.ImageRemoval.REMOVED) {
        LOG.debug("fork image {} removed: no sandbox uses it any more", image);
      }
    } catch (RuntimeException e) {
      LOG.warn("the fork image {} could not be removed: {}", image, e.toString());
    }
  }

  /**
   * Fork images of this server that nothing uses any more are removed: their forks were removed
   * while no server watched, a server stopped between capturing and starting, or the last thing
   * made on top of one (a snapshot of a fork) was just deleted.
   */
  void sweep() {
    List<CapturedImage> images;
    try {
      images = engine.images(Map.of(InstanceLabels.OURS, "true", InstanceLabels.SERVER, serverId));
    } catch (RuntimeException e) {
      LOG.warn("could not list this server's images to remove unused fork images: {}", e.toString());
      return;
    }
    for (CapturedImage i : images) {
      Map<String, String> l = i.labels();
      // a snapshot of a fork inherits the fork's mark from its container; it is a template, never swept
      if (!l.getOrDefault(Registry.LABEL_FORK_OF, "").isEmpty() && l.getOrDefault(Templates.LABEL_SNAPSHOT_ID, "").isEmpty()) {
        release(i.id());
      }
    }
  }
}
