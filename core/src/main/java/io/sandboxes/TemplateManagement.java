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
   * @param commit which sandbox, under which id, with which label and capture paths
   * @return the template that was stored
   * @throws SandboxException when a capture path lies on a mounted volume (volumes are not part
   *     of a template), or the capture fails
   */
  TemplateDescriptor commitTemplate(TemplateCommit commit);

  /**
   * Looks up a template by the caller's id.
   *
   * @param templateId the caller's id for the template
   * @return the template, or empty only when it positively does not exist
   * @throws SandboxException when the provider cannot look, or cannot tell whether it is in use
   */
  Optional<TemplateDescriptor> getTemplate(String templateId);

  /**
   * Lists templates, each marked in use when a running or paused sandbox was booted from it.
   *
   * @param idPrefix only ids starting with this, or null for all
   * @return the templates, empty only when the provider positively has none
   * @throws SandboxException when either listing cannot be read
   */
  List<TemplateDescriptor> listTemplates(@Nullable String idPrefix);

  /**
   * Removes a template; an absent one is success.
   *
   * @param templateId the caller's id for the template
   * @throws SandboxException when a running or paused sandbox uses it
   */
  void removeTemplate(String templateId);
}
