package io.sandboxes;

/**
 * What happens to a sandbox when its timeout passes.
 *
 * @since 0.1
 */
public enum OnTimeout {
  /** It is killed, with everything in it. The default, as on E2B. */
  KILL,
  /** It is paused with its memory: processes carry on where they were after a resume. */
  PAUSE,
  /** It is paused keeping only its filesystem: processes are gone after a resume. */
  PAUSE_FILESYSTEM
}
