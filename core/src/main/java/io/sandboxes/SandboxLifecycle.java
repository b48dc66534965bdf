package io.sandboxes;

/**
 * What a sandbox does when its timeout passes, as the control plane reports it in a sandbox's
 * record (E2B's {@code SandboxInfo.lifecycle}). The record says pause or kill, not whether a pause
 * keeps memory: that is fixed at create ({@link OnTimeout}) and not reported back.
 *
 * @param pausesOnTimeout {@code true} when the sandbox is paused at its timeout (E2B's
 *     {@code onTimeout: "pause"}), {@code false} when it is killed ({@code "kill"})
 * @param autoResume whether traffic to the paused sandbox resumes it
 * @since 0.1
 */
public record SandboxLifecycle(boolean pausesOnTimeout, boolean autoResume) {}
