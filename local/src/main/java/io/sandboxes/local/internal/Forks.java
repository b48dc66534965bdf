package io.sandboxes.local.internal;

import io.sandboxes.local.internal.runtime.InstanceLabels;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import io.sandboxes.local.internal.Registry.ForkOutcome;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forks of a running sandbox: its filesystem captured once, and that many new sandboxes started
 * from the copy, each with the parent's template, metadata, environment, lifecycle, volumes and
 * network policy.
 */
final class Forks {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
  static final String FORK_REPOSITORY = "sandboxes-local/fork";
  /** How many forks of one request start at once. */
  private static final int FORK_PARALLELISM = 3;

  private final Map<String, LocalSandbox> sandboxes;
  private final SandboxEngine engine;
  private final String serverId;
  private final ForkImages forkImages;
  private final WarmPool pool;
  private final SandboxStarts starts;
  private final SandboxNetworking networking;
  private final SandboxLifecycle lifecycle;

  Forks(Map<String, LocalSandbox> sandboxes, SandboxEngine engine, String serverId, ForkImages forkImages, WarmPool pool,
      SandboxStarts starts, SandboxNetworking networking, SandboxLifecycle lifecycle) {
    this.sandboxes = sandboxes;
    this.engine = engine;
    this.serverId = serverId;
    this.forkImages = forkImages;
    this.pool = pool;
    this.starts = starts;
    this.networking = networking;
    this.lifecycle = lifecycle;
  }

  /**
   * Forks a running sandbox: its filesystem is captured once ({@code docker commit}, the
   * container frozen for the moment of the copy, as E2B briefly pauses it) and {@code count}
   * sandboxes are started from that copy under new ids. Each fork gets the parent's template id,
   * metadata, environment variables, lifecycle (pause or kill at the deadline, auto-resume),
   * volume mounts and network policy, and a deadline {@code timeout} from now; each diverges from
   * the parent and from the others from then on. Memory and processes are not captured (E2B's
   * forks resume the parent's memory): a fork starts with nothing running. The parent keeps
   * running with its id and deadline untouched.
   *
   * <p>The captured image is kept while any fork made from it exists; the removal of the last
   * removes it.
   *
   * @return one outcome per requested fork, each a sandbox or the error that kept it from starting
   * @throws RpcError not_found when the parent is gone, already_exists (409) when it is paused,
   *     internal when its filesystem could not be captured (then no fork was attempted)
   */
  List<ForkOutcome> fork(LocalSandbox parent, int count, Duration timeout) throws RpcError {
    if (count < 1 || count > Registry.MAX_FORKS) {
      throw new RpcError("invalid_argument", "count must be between 1 and " + Registry.MAX_FORKS + ", got " + count);
    }
    String image;
    parent.transitions.lock();
    try {
      if (sandboxes.get(parent.id()) != parent) {
        throw new RpcError("not_found", "Sandbox \"" + parent.id() + "\" doesn't exist or you don't have access to it");
      }
      if (parent.paused()) {
        throw new RpcError("already_exists", "Sandbox '" + parent.id() + "' is paused and cannot be forked; resume it first");
      }
      image = captureForFork(parent);
      forkImages.hold(image);
    } finally {
      parent.transitions.unlock();
    }
    ForkOutcome[] outcomes = new ForkOutcome[count];
    java.util.Arrays.fill(outcomes, new ForkOutcome(null, new RpcError("internal", "the fork could not be started")));
    java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(FORK_PARALLELISM);
    try (java.util.concurrent.ExecutorService starts = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < count; i++) {
        int n = i;
        starts.submit(() -> {
          slots.acquireUninterruptibly();
          try {
            outcomes[n] = startFork(parent, image, timeout);
          } finally {
            slots.release();
          }
        });
      }
    } finally {
      forkImages.unhold(image); // when no fork started, nothing holds it
    }
    List<String> started = new ArrayList<>();
    for (ForkOutcome o : outcomes) {
      if (o.sandbox() != null) {
        started.add(o.sandbox().id());
      }
    }
    parent.log("info", "forked (filesystem only): " + started.size() + " of " + count + " started"
        + (started.isEmpty() ? "" : ": " + String.join(", ", started)));
    StructuredLog.atInfo(LOG).addKeyValue("event", "sandbox.forked").addKeyValue("sandbox", parent.id()).addKeyValue("requested", count)
        .addKeyValue("started", started.size()).log("sandbox forked");
    return List.of(outcomes);
  }

  private ForkOutcome startFork(LocalSandbox parent, String image, Duration timeout) {
    LocalSandbox.Lifecycle from = parent.lifecycle();
    LocalSandbox fork;
    Runnable ended = pool.createBegins(); // a fork's start is a cold create too
    try {
      fork = starts.start(image, image, parent.templateId(), timeout, parent.metadata(), parent.envVars(),
          new LocalSandbox.Lifecycle(from.pauseOnTimeout(), from.autoPauseMemory(), from.autoResume(), timeout.toSeconds()),
          parent.volumeMounts());
    } catch (RpcError e) {
      return new ForkOutcome(null, e);
    } catch (RuntimeException e) {
      LOG.warn("a fork of sandbox {} could not be started: {}", parent.id(), e.toString());
      return new ForkOutcome(null, new RpcError("internal", "the fork could not be started: " + e.getMessage()));
    } finally {
      ended.run();
    }
    NetworkPolicy policy = parent.network();
    Boolean internet = parent.allowInternetAccess();
    if (policy != null || internet != null) {
      try {
        networking.setNetwork(fork, policy == null ? NetworkPolicy.NONE : policy, internet);
      } catch (RpcError | RuntimeException e) {
        lifecycle.kill(fork.id());
        RpcError why = e instanceof RpcError r ? r : new RpcError("internal", String.valueOf(e.getMessage()));
        return new ForkOutcome(null, new RpcError(why.code(), "the fork's network policy could not be enforced: " + why.getMessage()));
      }
    }
    fork.log("info", "a fork of sandbox " + parent.id() + " (its filesystem; no memory, nothing running)");
    return new ForkOutcome(fork, null);
  }

  /** {@code docker commit} of a sandbox for its forks: an image of this server, no template. */
  private String captureForFork(LocalSandbox parent) throws RpcError {
    Map<String, String> labels = new HashMap<>();
    labels.put(InstanceLabels.OURS, "true");
    labels.put(InstanceLabels.SERVER, serverId);
    labels.put(Registry.LABEL_FORK_OF, parent.id());
    // what the parent's container carries (its identity, a snapshot's id it was made from) is not the image's
    labels.put(InstanceLabels.SANDBOX_ID, "");
    labels.put(InstanceLabels.ENVD_TOKEN, "");
    labels.put(Templates.LABEL_SNAPSHOT_ID, "");
    labels.put(Registry.LABEL_FORK_IMAGE, "");
    try {
      return engine.capture(parent.instanceId(), FORK_REPOSITORY, Registry.newSandboxId(), labels);
    } catch (RuntimeException e) {
      throw new RpcError("internal", "capturing sandbox " + parent.id() + " for its forks failed: " + e.getMessage());
    }
  }
}
