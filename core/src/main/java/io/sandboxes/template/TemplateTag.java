package io.sandboxes.template;

import java.time.Instant;
import java.util.Objects;

/**
 * One tag of a template, as E2B's {@code Template.getTags} lists it.
 *
 * @param tag the tag's name, e.g. {@code default} or {@code v1}
 * @param buildId the build it points at
 * @param createdAt when it was assigned
 * @since 0.1
 */
public record TemplateTag(String tag, String buildId, Instant createdAt) {

  /** Validates the components. */
  public TemplateTag {
    Objects.requireNonNull(tag, "tag");
    Objects.requireNonNull(buildId, "buildId");
    Objects.requireNonNull(createdAt, "createdAt");
  }
}
