package io.sandboxes.local.internal.runtime;

/**
 * The names of what the server records on a sandbox's instance, on the images it captures and on
 * the other things it makes in the runtime (volumes, networks): read back after a restart to find
 * its own things again and to take its sandboxes back. Every runtime keeps them as it keeps
 * labels (Docker's labels, a pod's labels or annotations); the names are the server's, and their
 * values are what the server wrote.
 */
public final class InstanceLabels {
  /** Marks a thing as made by the local server; cleanup touches nothing without it. */
  public static final String OURS = "io.sandboxes.local";
  /** The id of the server (its state folder) that made it. */
  public static final String SERVER = "io.sandboxes.server";
  /** The E2B id of the sandbox an instance is; empty on a pool member not yet claimed and on a captured image. */
  public static final String SANDBOX_ID = "io.sandboxes.sandbox-id";
  /** The template a sandbox was made from. */
  public static final String TEMPLATE = "io.sandboxes.template";
  /** The sandbox's metadata, as a JSON object. */
  public static final String METADATA = "io.sandboxes.metadata";
  /** When the sandbox's timeout ends, as an ISO-8601 instant. */
  public static final String DEADLINE = "io.sandboxes.deadline";
  /** When the sandbox started, as an ISO-8601 instant. */
  public static final String STARTED = "io.sandboxes.started-at";
  /** The sandbox's envd access token; empty when it has none. */
  public static final String ENVD_TOKEN = "io.sandboxes.envd-token";

  private InstanceLabels() {}
}
