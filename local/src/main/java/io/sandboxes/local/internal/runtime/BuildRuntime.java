package io.sandboxes.local.internal.runtime;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.Nullable;

/**
 * What template builds need of the runtime: images (listed by label, inspected, tagged, removed)
 * and steps (an isolated run of a command from an image, whose result is committed to a new
 * image). A step is named by the id the runtime gives it; the build side assumes nothing of what
 * a step is (a container, a pod) nor how the runtime is reached.
 *
 * <p>Failures the build side tells apart are typed ({@link InUse}, {@link Unfinished}); any other
 * failure of the runtime is a {@link RuntimeException} whose message says what went wrong.
 */
@NullMarked
public interface BuildRuntime {

  /**
   * An image as a listing shows it.
   *
   * @param created when it was made, in seconds since the epoch
   * @param labels its labels (empty when it has none)
   * @param tags its {@code repository:tag} names (empty when it has none)
   */
  record Image(String id, long created, Map<String, String> labels, List<String> tags) {}

  /**
   * What an image gives a container started from it.
   *
   * @param user its user, or null when it names none
   * @param workdir its working directory, or null when it names none
   * @param env its environment as {@code KEY=value}
   */
  record ImageConfig(String id, @Nullable String user, @Nullable String workdir, List<String> env) {}

  /**
   * One step to run: {@code command} from {@code image} as {@code user} in {@code workdir}, under
   * the build's resources, with the isolation the runtime gives a sandbox (a step is as hostile as
   * the code in one), labelled with {@code labels}.
   */
  record StepSpec(String image, Map<String, String> labels, List<String> env, String user, String workdir, List<String> command,
      int cpuCount, int memoryMB) {}

  /** Where a step's output goes: each chunk as the runtime delivers it, then its end. */
  interface Output {
    /** A chunk of output, from the step's standard error when {@code stderr}. */
    void chunk(byte[] bytes, boolean stderr);

    /** The output ended: nothing follows. */
    void end();
  }

  /** A step's output being read; closing it stops the reading. */
  interface Attachment extends AutoCloseable {
    /** @return whether the runtime answered the attach within {@code limit} */
    boolean awaitAttached(Duration limit) throws InterruptedException;

    /** Waits up to {@code limit} for the output's end. */
    void awaitEnd(Duration limit) throws InterruptedException;

    @Override
    void close() throws IOException;
  }

  /** The runtime's client gave up on a step (it did not finish in the time it was given). */
  final class Unfinished extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message the client's own account */
    public Unfinished(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** @return the images carrying every one of {@code labels}; with {@code all}, intermediate images too */
  List<Image> images(Map<String, String> labels, boolean all);

  /** @return what an image gives its containers; empty when there is no such image */
  Optional<ImageConfig> inspect(String reference);

  /** @return the id of an image; fails when there is no such image */
  String imageId(String reference);

  /** @return whether an image of that reference exists */
  boolean imageExists(String reference);

  /** Points {@code repository:tag} at an image, moving it from where it pointed. */
  void tag(String imageId, String repository, String tag);

  /**
   * Removes an image or one of its names (never by force), and nothing else: not the untagged
   * parents it was built on, which a running build may have taken from the step cache.
   *
   * @return false when there was no such image
   * @throws InUse when something uses it
   */
  boolean removeImage(String reference);

  /**
   * Makes a plain Debian suite's image when it is not there (once per machine).
   *
   * @param progress each line of what it does
   * @return the image's reference
   * @throws IllegalArgumentException for a suite that cannot be made
   */
  String ensureDebian(String suite, Consumer<String> progress);

  /** @return the ids of the steps (of any state) carrying every one of {@code labels} */
  List<String> steps(Map<String, String> labels);

  /** Creates a step, not yet started; @return its id */
  String createStep(StepSpec spec);

  /** Unpacks a tar archive at the root of a created step's file system. */
  void putArchive(String stepId, Path tar) throws IOException;

  /** Starts reading a created step's output (before its start, so none is lost). */
  Attachment attach(String stepId, Output output);

  /** Starts a created step. */
  void start(String stepId);

  /**
   * Waits for a step to end.
   *
   * @return its exit code, or null when the runtime reports none
   * @throws Unfinished when it does not end within {@code limit}
   */
  @Nullable Integer awaitExit(String stepId, Duration limit);

  /** Commits a step's file system to a new image with {@code labels}; @return the image's id */
  String commit(String stepId, Map<String, String> labels);

  /** Commits a step's file system to a new image named {@code repository:tag}; @return the image's id */
  String commit(String stepId, Map<String, String> labels, String repository, String tag);

  /** Removes a step, whatever its state; one already gone is no error. */
  void removeStep(String stepId);
}
