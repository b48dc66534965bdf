package io.sandboxes.e2b;

/**
 * How connecting resumes a paused sandbox, as E2B's {@code onResume}.
 *
 * @since 0.1
 */
public enum OnResume {
  /** From its memory: processes carry on where they were. The default. */
  RESTORE,
  /** A cold boot from its filesystem: processes and open connections are gone. */
  REBOOT
}
