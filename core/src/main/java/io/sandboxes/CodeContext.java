package io.sandboxes;

import java.util.Objects;

/**
 * A code interpreter context: one kernel with its own state (variables, imports, working
 * directory), in which {@link Sandbox#runCode(String, RunCodeOptions)} runs code one execution
 * at a time.
 *
 * @param id the context's id
 * @param language the kernel's language, such as {@code python}
 * @param cwd the kernel's working directory
 * @since 0.1
 */
public record CodeContext(String id, String language, String cwd) {
  /** Validates the components. */
  public CodeContext {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(cwd, "cwd");
  }
}
