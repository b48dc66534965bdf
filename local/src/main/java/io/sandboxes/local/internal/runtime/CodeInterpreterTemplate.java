package io.sandboxes.local.internal.runtime;

import java.util.Set;

/**
 * The code-interpreter template as the server knows it, whichever runtime makes its image: the
 * names it answers to, the port its bridge listens on, and the image label a sandbox's start
 * command is read from (on any image that names one, built templates too).
 */
public final class CodeInterpreterTemplate {
  /** The template id E2B's code-interpreter SDKs ask for. */
  public static final String TEMPLATE = "code-interpreter-v1";
  /** The other names the template answers to. */
  public static final Set<String> ALIASES = Set.of(TEMPLATE, "code-interpreter");
  /** The port the bridge listens on inside the sandbox, as E2B's. */
  public static final int PORT = 49999;
  /** An image label holding the command (a JSON array) a sandbox made from the image starts with. */
  public static final String LABEL_START = "io.sandboxes.start-cmd";
  /** An image label naming the user the start command runs as; {@code user} when the image has none. */
  public static final String LABEL_START_USER = "io.sandboxes.start-user";

  private CodeInterpreterTemplate() {}
}
