package io.sandboxes.template;

import java.util.List;
import java.util.Objects;

/**
 * A finished template build: create sandboxes from it by {@link #name()} (or by
 * {@link #templateId()}).
 *
 * @param templateId the template's id; a rebuild under the same name keeps it
 * @param buildId this build's id
 * @param name the alias the template was built under
 * @param tags the tags the server gave this build
 * @since 0.1
 */
public record BuildInfo(String templateId, String buildId, String name, List<String> tags) {

  /** Validates and copies the components. */
  public BuildInfo {
    Objects.requireNonNull(templateId, "templateId");
    Objects.requireNonNull(buildId, "buildId");
    Objects.requireNonNull(name, "name");
    tags = List.copyOf(Objects.requireNonNull(tags, "tags"));
  }
}
