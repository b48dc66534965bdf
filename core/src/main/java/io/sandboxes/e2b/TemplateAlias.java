package io.sandboxes.e2b;

import java.util.Objects;

/**
 * What a template alias names, as the control plane's {@code GET /templates/aliases/{alias}}
 * answers it.
 *
 * @param templateId the template the alias names
 * @param isPublic whether the template is public (as {@code base} is) rather than the team's own
 * @since 0.1
 */
public record TemplateAlias(String templateId, boolean isPublic) {

  /** Checks the id is there. */
  public TemplateAlias {
    Objects.requireNonNull(templateId, "templateId");
  }
}
