package io.sandboxes;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What to capture as a template.
 *
 * @param sandboxId the sandbox to capture
 * @param templateId the caller's own id for the template
 * @param label a human label, or null
 * @param capturePaths paths that must be part of the capture (none may lie on a mounted volume)
 * @since 0.1
 */
public record TemplateCommit(String sandboxId, String templateId, @Nullable String label, List<String> capturePaths) {

  /** Validates and copies the components. */
  public TemplateCommit {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(templateId, "templateId");
    if (!templateId.matches("[a-zA-Z0-9][a-zA-Z0-9_.-]*")) {
      throw new IllegalArgumentException("templateId must be letters, digits, '_', '.' or '-', got '" + templateId + "'");
    }
    capturePaths = List.copyOf(Objects.requireNonNull(capturePaths, "capturePaths"));
  }

  /**
   * Returns the simplest commit: a sandbox under a template id.
   *
   * @param sandboxId the sandbox to capture
   * @param templateId the caller's own id for the template
   * @return a commit of that sandbox under that id, with no label and no capture paths
   */
  public static TemplateCommit of(String sandboxId, String templateId) {
    return new TemplateCommit(sandboxId, templateId, null, List.of());
  }
}
