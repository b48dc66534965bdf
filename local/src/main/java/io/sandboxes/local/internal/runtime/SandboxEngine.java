package io.sandboxes.local.internal.runtime;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the sandbox side of the server asks of the runtime that runs sandboxes, by the id of a
 * sandbox's instance (a container on Docker). Docker implements it today; another runtime (pods
 * on Kubernetes) implements the same operations its own way. A call the runtime could not carry
 * out throws a {@link RuntimeException}; an instance that does not exist is an answer, never an
 * exception, where the operation says so.
 */
public interface SandboxEngine {

  /**
   * Opens the server's end of a new sandbox's daemon link, before its instance exists.
   *
   * @throws IOException when it could not be made
   */
  DaemonLink openDaemon(String sandboxId) throws IOException;

  /**
   * Opens again the daemon link of a sandbox a restarted server takes back.
   *
   * @param labels what its instance recorded
   * @return the link, or null when the instance records none (it was made without the daemon)
   */
  @Nullable DaemonLink reopenDaemon(Map<String, String> labels) throws IOException;

  /** Removes what the daemon link of a sandbox that is gone kept, from what its instance recorded. */
  void discardDaemon(Map<String, String> labels);

  /** Removes what the daemon link of a sandbox that is gone kept, when only its id is known. */
  void discardDaemon(String sandboxId);

  /** Removes what every daemon link kept, and the daemon itself: the server is stopping and its sandboxes are gone. */
  void discardDaemons();

  /**
   * Makes and starts a sandbox's instance with its daemon injected, connecting out over
   * {@code daemon} (opened by {@link #openDaemon}).
   *
   * @return the instance's id
   * @throws RuntimeException when it could not be made or started
   */
  String launch(InstanceSpec spec, DaemonLink daemon);

  /**
   * Starts following what happens to the instances of one server (those it labelled
   * {@link InstanceLabels#OURS} and {@link InstanceLabels#SERVER} {@code serverId}; other servers'
   * are never reported): every instance that ended or was removed, frozen or thawed, by anyone.
   * The following opens again whenever it drops, and every (re)opening is followed by
   * {@link InstanceEvents#resync}, so what happened while it was down is still seen.
   *
   * @return the following; closing it stops the reports
   */
  InstanceEvents.Subscription follow(String serverId, InstanceEvents receiver);

  /**
   * Makes a freshly mounted volume writable by the sandbox's user, when its root is root's and empty.
   *
   * @throws IOException when the instance could not be reached
   */
  void prepareVolume(String instanceId, String path) throws IOException;

  /**
   * Freezes an instance's processes, memory kept: they carry on after {@link #thaw}.
   *
   * @throws RuntimeException when the runtime refused, e.g. a freezer that gave up mid-fork
   *     (its message then says {@code unable to freeze})
   */
  void freeze(String instanceId);

  /** Thaws an instance {@link #freeze} froze. */
  void thaw(String instanceId);

  /**
   * Freezes an instance's processes from the host at almost no cost, without the runtime's own
   * pause (which costs about as much work as a removal), when the host lets this process do so.
   * The runtime does not learn of it: undo it with {@link #thawCheaply} before anything else is
   * done with the instance.
   *
   * @return false when it cannot be done here (then nothing was done)
   */
  default boolean freezeCheaply(String instanceId) {
    return false;
  }

  /** Thaws what {@link #freezeCheaply} froze; nothing when it cannot. */
  default void thawCheaply(String instanceId) {}

  /** Stops an instance, only its filesystem kept, its processes given {@code grace} to end. */
  void stop(String instanceId, Duration grace);

  /** Starts a stopped instance again, with its filesystem as {@link #stop} left it. */
  void restart(String instanceId);

  /**
   * Removes an instance and what only it used.
   *
   * @return false when it did not exist
   */
  boolean remove(String instanceId);

  /**
   * Lists instances, running or not.
   *
   * @return the instances carrying every one of {@code labels}
   * @throws RuntimeException when the runtime could not be asked
   */
  List<Instance> instances(Map<String, String> labels);

  /**
   * Looks at an instance now.
   *
   * @return its state, {@link InstanceState#GONE} when it does not exist
   * @throws RuntimeException when the runtime could not be asked (nothing is then known)
   */
  InstanceState state(String instanceId);

  /** @return the environment the instance was made with (its image's and its sandbox's), as {@code NAME=value} */
  List<String> environment(String instanceId);

  /** @return the id of the image the instance was made from */
  String imageOf(String instanceId);

  /**
   * The labels an image carries (what a template recorded, e.g. the service it starts).
   *
   * @return its labels, empty when it has none
   * @throws RuntimeException when the image could not be read
   */
  Map<String, String> imageLabels(String imageId);

  /** Gives an instance a new name in the runtime's own listings; nothing depends on it. */
  void rename(String instanceId, String name);

  /**
   * Captures an instance's filesystem as an image, the instance frozen for the moment of the copy.
   *
   * @return the new image's id
   */
  default String capture(String instanceId, String repository, String tag, Map<String, String> labels) {
    return capture(instanceId, repository, tag, labels, true);
  }

  /**
   * Captures an instance's filesystem as an image.
   *
   * @param freeze whether to freeze the instance for the moment of the copy (false for one
   *     already frozen)
   * @return the new image's id
   */
  String capture(String instanceId, String repository, String tag, Map<String, String> labels, boolean freeze);

  /**
   * Makes the code-interpreter template's image from the base image when it is not there (once
   * per machine; minutes the first time).
   *
   * @param progress each line of what it does
   * @return the image's reference
   */
  String ensureCodeInterpreter(String baseImage, java.util.function.Consumer<String> progress);

  /** What {@link #removeImage} came to. */
  enum ImageRemoval {
    /** It is removed. */
    REMOVED,
    /** Something still uses it (an instance, or an image made on top of it): it stays. */
    IN_USE,
    /** It did not exist. */
    GONE
  }

  /** Removes an image unless something still uses it. */
  ImageRemoval removeImage(String imageId);

  /**
   * Removes an image even when stopped instances were made from it (a running one keeps it).
   *
   * @return false when it did not exist
   * @throws InUse when the runtime refused because something uses it
   */
  boolean discardImage(String imageId);

  /** @return the images carrying every one of {@code labels} */
  List<CapturedImage> images(Map<String, String> labels);

  /** @return how this runtime holds sandboxes' disk limits, and measures their writable layers where it must */
  DiskLimits diskLimits();

  /**
   * @return the memory of the machine the instances run on, in bytes, as the runtime reports it;
   *     empty when it could not be read
   */
  java.util.OptionalLong memoryBytes();

  /**
   * An instance's CPU and memory use now.
   *
   * @param cpuUsedPct CPU in percent of the cores it may use, over the time since the last reading
   *     (or a short window when there is none)
   * @param memUsed memory in use, page cache left out, in bytes
   * @param memCache page cache, in bytes
   * @param memLimit the memory limit the runtime enforces, in bytes; 0 or less when none is known
   */
  record Usage(double cpuUsedPct, long memUsed, long memCache, long memLimit) {}

  /**
   * Reads an instance's CPU and memory use without asking anything inside it. The runtime keeps
   * each instance's last reading for the CPU rate, until {@link #retainUsage} forgets it.
   *
   * @param cores how many cores it may use (its CPU limit, at most the host's)
   * @throws IOException when its use cannot be found or read: the sample is then absent, never zero
   */
  Usage usage(String instanceId, int cores) throws IOException;

  /** Forgets the last readings of instances not in {@code instanceIds}. */
  void retainUsage(java.util.Set<String> instanceIds);

  /**
   * A volume the runtime keeps: storage that outlives the instances that mount it.
   *
   * @param name the runtime's name of it
   * @param labels what the server recorded on it
   */
  record StoredVolume(String name, Map<String, String> labels) {
    /** Copies the labels. */
    public StoredVolume {
      labels = Map.copyOf(labels);
    }
  }

  /**
   * Lists volumes.
   *
   * @param selectors each {@code key=value} (the label has that value) or a bare {@code key} (it
   *     has the label, of any value); a volume is listed when it matches every one
   * @throws RuntimeException when the runtime could not be asked
   */
  List<StoredVolume> volumes(List<String> selectors);

  /**
   * Makes an empty volume, which {@link InstanceSpec#volumes} then names by {@code volumeId}.
   *
   * @return what the runtime shows of it
   */
  StoredVolume createVolume(String volumeId, Map<String, String> labels);

  /**
   * Removes a volume and what it holds.
   *
   * @param name its {@link StoredVolume#name}
   * @return false when it did not exist
   * @throws InUse when an instance uses it
   */
  boolean removeVolume(String name);
}
