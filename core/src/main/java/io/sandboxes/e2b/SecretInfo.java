package io.sandboxes.e2b;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A secret's metadata, as E2B's {@code SecretInfo}; the value is write-only and never read back.
 *
 * @param secretId the server's id for it ({@code sec_}…)
 * @param name its name, unique per project, lower-cased by the server
 * @param version the version served to readers that name none (1 for a new secret)
 * @param metadata the caller's metadata, empty when none
 * @param createdAt when it was created
 * @param updatedAt when it was last updated
 * @since 0.1
 */
public record SecretInfo(String secretId, String name, long version, Map<String, String> metadata, Instant createdAt,
    Instant updatedAt) {

  /** Validates and copies the components. */
  public SecretInfo {
    Objects.requireNonNull(secretId, "secretId");
    Objects.requireNonNull(name, "name");
    metadata = Map.copyOf(metadata);
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
  }
}
