package io.sandboxes.local.internal.runtime;

/**
 * What the runtime reports of a server's instances as it happens, whoever caused it (this server
 * or someone outside). An event only says "look again": the receiver decides from what
 * {@link SandboxEngine#state} shows now. A handler's failure is logged by the runtime and ends
 * nothing.
 */
public interface InstanceEvents {

  /** An instance stopped running or was removed. */
  void ended(String instanceId);

  /** An instance was frozen or thawed. */
  void freezeChanged(String instanceId);

  /**
   * The report was (re)opened: what happened while it was not open is not reported, so every
   * instance is to be looked at again. Called after every opening, the first included.
   */
  void resync();

  /** The runtime's following of one server's instances; closing it stops the reports. */
  interface Subscription extends AutoCloseable {
    /**
     * For tests: drops the report as the runtime dropping it would, and keeps it closed until the
     * returned handle is closed; then it opens again (and {@link #resync}s) as after any drop.
     */
    AutoCloseable suspend();

    @Override
    void close();
  }
}
