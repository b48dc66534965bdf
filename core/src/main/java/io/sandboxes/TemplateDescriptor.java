package io.sandboxes;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A template a sandbox can boot from.
 *
 * @param id the caller's id for it (E2B's namespace and tag removed)
 * @param ref the provider's full reference, e.g. {@code team/mol-project-p1:default}
 * @param label the label it was committed with, when known
 * @param sizeBytes its size, or null when the provider does not say
 * @param inUse whether a running or paused sandbox was booted from it
 * @param createdAt when it was committed (UTC ISO-8601, three fractional digits), or null when unknown
 * @since 0.1
 */
public record TemplateDescriptor(String id, String ref, @Nullable String label, @Nullable Long sizeBytes, boolean inUse,
    @Nullable String createdAt) {

  /** Validates the components. */
  public TemplateDescriptor {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(ref, "ref");
  }
}
