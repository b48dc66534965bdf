package io.sandboxes;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A provider that can capture a sandbox as a template and boot new sandboxes from it
 * ({@code SandboxConfig.withTemplate(id)}).
 *
 * @since 0.1
 */
public interface TemplateManagement {

  /**
   * Captures a sandbox under the caller's template id; committing the same id again replaces it.
   *
   * @throws SandboxException when a capture path lies on a mounted volume (volumes are not part
   *     of a template), or the capture fails
   */
  TemplateDescriptor commitTemplate(TemplateCommit commit);

  /**
   * @return the template, or empty only when it positively does not exist
   * @throws SandboxException when the provider cannot look, or cannot tell whether it is in use
   */
  Optional<TemplateDescriptor> getTemplate(String templateId);

  /**
   * @param idPrefix only ids starting with this, or null for all
   * @throws SandboxException when either listing cannot be read
   */
  List<TemplateDescriptor> listTemplates(@Nullable String idPrefix);

  /**
   * Removes a template; an absent one is success.
   *
   * @throws SandboxException when a running or paused sandbox uses it
   */
  void removeTemplate(String templateId);
}
