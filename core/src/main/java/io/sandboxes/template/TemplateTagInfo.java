package io.sandboxes.template;

import java.util.List;
import java.util.Objects;

/**
 * What an assignment of tags did, as E2B's {@code Template.assignTags} answers.
 *
 * @param buildId the build the tags now point at
 * @param tags the tags assigned, as the server normalized them
 * @since 0.1
 */
public record TemplateTagInfo(String buildId, List<String> tags) {

  /** Validates and copies the components. */
  public TemplateTagInfo {
    Objects.requireNonNull(buildId, "buildId");
    tags = List.copyOf(Objects.requireNonNull(tags, "tags"));
  }
}
