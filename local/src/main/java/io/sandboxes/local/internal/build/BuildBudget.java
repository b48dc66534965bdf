package io.sandboxes.local.internal.build;

/**
 * What one template build's COPY steps may expand their uploaded archives to: bytes (everything
 * an archive expands to, entries skipped included) and entries written into the image (one per
 * 16 KiB of the byte budget, the ratio ext4 makes inodes at, as the sandboxes' disk limit counts
 * them). The server's default is the disk limit it gives each sandbox.
 */
final class BuildBudget {
  /** Entries allowed per MiB of budget. */
  static final long ENTRIES_PER_MB = 64;

  private final long megabytes;
  private long bytesLeft;
  private long entriesLeft;

  BuildBudget(long megabytes) {
    this.megabytes = megabytes;
    this.bytesLeft = megabytes * 1024 * 1024;
    this.entriesLeft = megabytes * ENTRIES_PER_MB;
  }

  /** @return the bytes the build's archives may still expand to */
  synchronized long bytesLeft() {
    return bytesLeft;
  }

  /** Charges what one step's archive expanded to (never more than {@link #bytesLeft()}: its read stopped there). */
  synchronized void charge(long bytes) {
    bytesLeft = Math.max(0, bytesLeft - bytes);
  }

  /** @return false when the build has written all the entries it may */
  synchronized boolean entry() {
    if (entriesLeft <= 0) {
      return false;
    }
    entriesLeft--;
    return true;
  }

  /** The budget, for a message. */
  String describe() {
    return megabytes + " MiB (and " + megabytes * ENTRIES_PER_MB + " files, folders and links)";
  }
}
