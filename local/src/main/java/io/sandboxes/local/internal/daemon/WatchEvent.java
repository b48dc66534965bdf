package io.sandboxes.local.internal.daemon;

/**
 * A change under a watched folder.
 *
 * @param name the path relative to the watched folder
 */
public record WatchEvent(Kind kind, String name) {
  /** What changed; {@code OVERFLOW} means events were lost (the kernel's queue filled). */
  public enum Kind { CREATE, WRITE, REMOVE, RENAME, CHMOD, OVERFLOW }
}
