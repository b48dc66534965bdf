package io.sandboxes.e2b;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Options of {@link Filesystem#watchDir}, as E2B's {@code WatchOpts}; immutable, each
 * {@code with…} returns a copy.
 *
 * @since 0.1
 */
public final class WatchOptions {
  /** E2B's default: a watch ends after 60 seconds unless told otherwise. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
  private static final WatchOptions DEFAULTS = new WatchOptions(false, false, false, DEFAULT_TIMEOUT, null, null);

  private final boolean recursive;
  private final boolean includeEntry;
  private final boolean allowNetworkMounts;
  private final Duration timeout;
  private final @Nullable String user;
  private final @Nullable Consumer<@Nullable Throwable> onExit;

  private WatchOptions(boolean recursive, boolean includeEntry, boolean allowNetworkMounts, Duration timeout,
      @Nullable String user, @Nullable Consumer<@Nullable Throwable> onExit) {
    this.recursive = recursive;
    this.includeEntry = includeEntry;
    this.allowNetworkMounts = allowNetworkMounts;
    this.timeout = timeout;
    this.user = user;
    this.onExit = onExit;
  }

  /**
   * E2B's defaults: the folder itself only, no entries, a 60 s deadline, the default user.
   *
   * @return the default options
   */
  public static WatchOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Watches the whole tree under the folder, not only its direct children.
   *
   * @param recursive whether to watch subfolders too
   * @return a copy with it set
   */
  public WatchOptions withRecursive(boolean recursive) {
    return new WatchOptions(recursive, includeEntry, allowNetworkMounts, timeout, user, onExit);
  }

  /**
   * Has each event carry what the daemon says of the path ({@link FilesystemEvent#entry()}), read
   * as the event is sent; an event whose path is gone by then (a removal, a rename away) has none.
   *
   * @param includeEntry whether events carry entries
   * @return a copy with it set
   */
  public WatchOptions withIncludeEntry(boolean includeEntry) {
    return new WatchOptions(recursive, includeEntry, allowNetworkMounts, timeout, user, onExit);
  }

  /**
   * Lets the watch be on a network file system mount, which the daemon refuses by default
   * (events there may be late or missing).
   *
   * @param allow whether network mounts may be watched
   * @return a copy with it set
   */
  public WatchOptions withAllowNetworkMounts(boolean allow) {
    return new WatchOptions(recursive, includeEntry, allow, timeout, user, onExit);
  }

  /**
   * How long the watch lasts; when it passes, the watch ends and {@link #withOnExit onExit} hears
   * of the deadline.
   *
   * @param timeout positive, or {@link Duration#ZERO} for a watch that lasts until stopped
   * @return a copy with the deadline set
   */
  public WatchOptions withTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    return new WatchOptions(recursive, includeEntry, allowNetworkMounts, timeout, user, onExit);
  }

  /**
   * Watches as this user of the sandbox (whose permissions apply, and whose home a relative path
   * starts from).
   *
   * @param user a user of the sandbox
   * @return a copy with the user set
   */
  public WatchOptions withUser(String user) {
    Objects.requireNonNull(user, "user");
    if (user.isEmpty()) {
      throw new IllegalArgumentException("user must not be empty; leave it unset for the sandbox's default user");
    }
    return new WatchOptions(recursive, includeEntry, allowNetworkMounts, timeout, user, onExit);
  }

  /**
   * Called once when the watch ends, on the watch's own thread: with null when it was stopped or
   * ended cleanly, with the failure when it broke off (its deadline, the sandbox gone, the folder
   * removed, an event listener that threw). Whatever it throws is dropped.
   *
   * @param onExit the listener
   * @return a copy with it set
   */
  public WatchOptions withOnExit(Consumer<@Nullable Throwable> onExit) {
    return new WatchOptions(recursive, includeEntry, allowNetworkMounts, timeout, user, Objects.requireNonNull(onExit, "onExit"));
  }

  /**
   * Returns whether subfolders are watched.
   *
   * @return whether subfolders are watched
   */
  public boolean recursive() {
    return recursive;
  }

  /**
   * Returns whether events carry entries.
   *
   * @return whether events carry entries
   */
  public boolean includeEntry() {
    return includeEntry;
  }

  /**
   * Returns whether network mounts may be watched.
   *
   * @return whether network mounts may be watched
   */
  public boolean allowNetworkMounts() {
    return allowNetworkMounts;
  }

  /**
   * Returns the watch's deadline, zero for none.
   *
   * @return the watch's deadline, zero for none
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Returns the user, or null for the sandbox's default.
   *
   * @return the user, or null for the sandbox's default
   */
  public @Nullable String user() {
    return user;
  }

  /**
   * Returns the exit listener, or null.
   *
   * @return the exit listener, or null
   */
  public @Nullable Consumer<@Nullable Throwable> onExit() {
    return onExit;
  }
}
